"""Session-state keys, in one place.

Every setting's widget is keyed by its `Settings` field name (`SETTING_KEYS`). The other keys
the app layer shares between modules are named here. A page's own widgets (a column picker,
a radio) use keys that start with the page's id and appear nowhere else.
"""

from __future__ import annotations

from .settings import URL_KEYS

SETTING_KEYS = URL_KEYS  # lang, source, weights, …, layer, head, query

INITIALISED = "_initialised"  # the settings were read from the link (first run of a session)
URL_NOTICES = "_url_notices"  # what the link asked for that could not be used
URL_SETTINGS = "_url_settings"  # the settings the link gave (its notices last while they do)
NOTICES = "_notices"  # what a change of settings adjusted (shown once)

UPLOAD = "upload"  # the file uploader
UPLOAD_ID = "_upload_id"  # the uploader's file id handled last
UPLOAD_ERROR = "_upload_error"  # (message, file name) of the last unusable upload
IMAGE_BYTES = "image_bytes"  # the last good upload
IMAGE_NAME = "image_name"  # its file name
NEW_SAMPLE = "new_sample"  # button: the next generated shape
ADVANCED = "sidebar_advanced"  # the sidebar's "Advanced" expander is open

QUERY_CLICK = "query_click"  # the explorer's state: {"commit": {"query", "nonce"}} (last commit)
LAST_CLICK = "_last_click"  # the commit already applied
QUERY_ROW = "query_row"  # number inputs of the query picker
QUERY_COL = "query_col"

EXPORT = "_export"  # (identity, .npz bytes) of the trace export, built on demand
EXPORT_BUILD = "export_build"  # button
EXPORT_DOWNLOAD = "export_download"  # download button
HANDOUT = "_handout"  # (identity, PDF bytes) of the walk as a handout, built on demand
HANDOUT_ASKED = "_handout_asked"  # this run was asked to build the PDF
HANDOUT_BUILD = "handout_build"  # button
HANDOUT_DOWNLOAD = "handout_download"  # download button
NAV_PREV = "nav_prev"  # previous / next buttons at the top of a step page
NAV_NEXT = "nav_next"
NAV_PREV_BOTTOM = "nav_prev_bottom"  # and again at the end of the page
NAV_NEXT_BOTTOM = "nav_next_bottom"

ENTRY = "_entry"  # the router (chrome.route) runs this script run's page: the app's navigation

"""Session-state keys, in one place.

Every setting's widget is keyed by its `Settings` field name (`SETTING_KEYS`). Every other key
the app writes or reads by name is named here (tests/test_app_layering.py fails on a literal
key elsewhere). A page's own widgets (a column picker, a radio) use keys that start with the
page's id and appear nowhere else.
"""

from __future__ import annotations

from .settings import URL_KEYS

SETTING_KEYS = URL_KEYS  # lang, source, weights, …, layer, head, query
LANG = "lang"  # the language control (its Settings field)
WEIGHTS = "weights"  # the weights control (its Settings field)
QUERY = "query"  # the query patch (its Settings field), set by the explorer's commit too

INITIALISED = "_initialised"  # the settings were read from the link (first run of a session)
URL_NOTICES = "_url_notices"  # what the link asked for that could not be used
URL_SETTINGS = "_url_settings"  # the settings the link gave (its notices last while they do)
NOTICES = "_notices"  # what a change of settings adjusted (shown once)
WEIGHTS_BEFORE = "_weights_before"  # the weights of the last run (to see them change)
OWN_ARCHITECTURE = "_own_architecture"  # the learner's architecture while a model locks it

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

COMPARE_WHAT = "cmp_what"  # Compare: what settings A and B differ in (its radio)
SCORES_KEY_J = "scores_key_j"  # Scores: the key column of the worked entry (its number input)

ENTRY = "_entry"  # the router (router.route) runs this script run's page: the app's navigation


# lesson mode (lens.lesson.ui.cards)
LESSON_RECORDS = "_lesson_records"  # task id -> Record (answered or shown)
LESSON_ASKED = "_lesson_asked"  # task id -> (binding, Fixed) of a task asked, not yet answered
LESSON_MISSING = "_lesson_missing"  # the task whose Check was pressed without an answer
LESSON_LAST = "_lesson_last"  # the task answered (or shown) last: its reveal is open
CLASS_BEHIND = "_class_behind"  # the class as a student's fallback look last found it, unfollowed
CLASS_CARDS_FULL = "_class_cards_full"  # a student's cards run with their page (not alone)
CLASS_PAGE_SEEN = "_class_page_seen"  # the class as the page around a student's cards last saw it
CLASS_CARDS_SEEN = "_class_cards_seen"  # a student's class card key -> the state last shown
SCROLL_TO = "_scroll_to"  # (container key, serial): scrolled into view after the next run
SCROLL_SERIAL = "_scroll_serial"  # the last request's serial (lens.scroll_js)
LESSON_CHOSEN = "_lesson_chosen"  # the walk's first page's choice was made (or the link made it)
LESSON_CHECK = "_lesson_check"  # a learner's concept check: round -> question -> option
LESSON_CHECK_MISSING = "_lesson_check_missing"  # the round sent with no answer chosen
LESSON_PICK = "lesson_pick_"  # + task: the patch picker's state (the explorer component, no maps)

# a live class (lens.classroom)
CLASS_MEMBER = "_class_member"  # this session's Member
CLASS_STORE_ERROR = "_class_store_error"  # why the store could not be reached, this run
CLASS_STATE = "_class_state"  # the class as this run read it (`class_state`)
TEACHER_ERROR = "_class_teacher_error"  # the last refused action, in words
CLASS_FORGET = "_class_forget"  # the teacher ended the class: forget it on the next run
CLASS_STEP_CHOICE = "class_step_choice"  # the teacher's step picker
CLASS_PRESENTING = "class_presenting"  # the teacher's "Presenting" switch (projector mode)
CLASS_PRESENTING_KEPT = "_class_presenting"  # its value, kept while the teacher is elsewhere
CLASS_JOIN_ERROR = "_class_join_error"  # the last join's refusal, in words
CLASS_JOIN_PENDING = "_class_join_pending"  # a join try that waits its delay: (code, nickname, s)
CLASS_CODE_INPUT = "class_code_input"  # the join form's inputs
CLASS_NICK_INPUT = "class_nickname_input"
CLASS_SEEN = "_class_seen"  # the class's settings and tasks as this session's last run saw them
CLASS_FOLLOWED = "_class_followed"  # the class's step this session last followed
CLASS_SENT = "_class_sent"  # (task, key) -> the message of the last send (refused: why)
CLASS_ENDED = "_class_ended"  # (code, token): this session's class ended while it was a student
CLASS_ENDED_SEEN = "_class_ended_seen"  # its results were shown once (then folded)
CLASS_LANG = "_class_lang"  # (token, language) the store holds for this session's student
CLASS_LANG_SWITCH = "class_lang_switch"  # the language switch in the main area (join, student)
CLASS_PROJECTOR = "_class_projector"  # this run's projector (`projector.Screen`), from its link
CLASS_REMOTE = "_class_remote"  # this teacher's browser is a phone used as a remote
CLASS_CHECK_SENT = "_class_check_sent"  # round -> the message of the last concept check send

# the sidebar's "Download a model" (lens.hub.ui)
HUB_OPEN = "hub_open"  # the expander stays open across reruns once opened
HUB_OUTCOME = "_hub_outcome"  # ("done", id) or ("error", id, reason, detail): shown once

LEARN_RUN = "_learn_run"  # How it learns: the learner's run of steps (lens.one_image.Run)
# How it learns' own inputs, read by its lesson tasks (lens/walk/learn.py) from the context's state
LEARN_SHAPE = "learn_shape"  # the shape's number input
LEARN_LAYER, LEARN_HEAD = "learn_layer", "learn_head"  # the layer and head choosers


# --- keys built from a name (one per widget of a kind) -------------------------------------------

def window_start(axis: str, key: str) -> str:
    """The number window's first row ("r") or column ("c") of the matrix keyed `key`."""
    return f"win_{axis}_{key}"


def compare_side(side: str, what: str) -> str:
    """Compare: side "a" or "b"'s value of the setting `what` (its select box)."""
    return f"cmp_{side}_{what}"

"""The join link's address (lens/classroom/ui/join.py): the one students reach, from
ENCODER_LENS_PUBLIC_URL when valid, else a proxy's X-Forwarded-Host/-Proto (behind the balancer
only), else the Host header, else the browser's URL; and what the teacher is told about it (an
ignored setting, a loopback address no student's device can open)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lens.classroom.ui.join import (
    PUBLIC_URL_ENV,
    is_loopback,
    join_first,
    lan_address,
    lan_suggestion,
    link_problems,
    public_base,
    valid_base,
)
from lens.classroom.ui.member import PROXY_ENV

URL = "http://localhost:8501/class"  # st.context.url: what the teacher's browser shows


def test_a_valid_public_url_wins_over_every_header():
    headers = {"Host": "10.0.0.9:8501", "X-Forwarded-Host": "proxy.example"}
    assert public_base("https://lens.school.example/", True, headers, URL) == (
        "https://lens.school.example")
    assert public_base(" http://10.0.0.5:8501 ", False, headers, URL) == "http://10.0.0.5:8501"


def test_a_public_url_keeps_its_path_prefix():
    assert public_base("https://school.example/lens/", False, {}, URL) == (
        "https://school.example/lens")


@pytest.mark.parametrize("env_url", ["", "lens.school.example", "ftp://lens.example",
                                     "http://", "http://host:port", "https://a b.example",
                                     "http://host/?x=1"])
def test_an_invalid_public_url_is_ignored(env_url):
    assert public_base(env_url, False, {"Host": "192.168.1.20:8501"}, URL) == (
        "http://192.168.1.20:8501")


def test_forwarded_headers_are_read_behind_the_balancer_only():
    headers = {"Host": "127.0.0.1:8501", "X-Forwarded-Host": "lens.school.example",
               "X-Forwarded-Proto": "https"}
    assert public_base(None, True, headers, URL) == "https://lens.school.example"
    assert public_base(None, False, headers, URL) == "http://127.0.0.1:8501"  # forgeable


def test_the_last_forwarded_entry_counts_as_the_client_address_does():
    headers = {"x-forwarded-host": "forged.example, lens.school.example",
               "x-forwarded-proto": "http, https"}
    assert public_base(None, True, headers, URL) == "https://lens.school.example"


def test_a_forwarded_host_without_a_proto_takes_the_urls_scheme():
    headers = {"X-Forwarded-Host": "lens.school.example:8443"}
    assert public_base(None, True, headers, "https://x/") == "https://lens.school.example:8443"


def test_a_bad_forwarded_header_falls_back_to_the_host_header():
    headers = {"X-Forwarded-Host": "bad host", "X-Forwarded-Proto": "gopher",
               "Host": "192.168.1.20:8501"}
    assert public_base(None, True, headers, URL) == "http://192.168.1.20:8501"


def test_the_host_header_takes_the_scheme_of_the_browsers_url():
    assert public_base(None, False, {"host": "lens.example"}, "https://x.example/class") == (
        "https://lens.example")
    assert public_base(None, False, {"Host": "192.168.1.20:8501"}, URL) == (
        "http://192.168.1.20:8501")


def test_without_headers_the_browsers_url_then_localhost():
    assert public_base(None, False, {}, "http://192.168.1.20:8501/class") == (
        "http://192.168.1.20:8501")
    assert public_base(None, False, {}, None) == "http://localhost:8501"


@pytest.mark.parametrize("host, base", [("[::1]:8501", "http://[::1]:8501"),
                                         ("[2001:db8::5]", "http://[2001:db8::5]"),
                                         ("[fe80::1%25eth0]:8501", "http://[fe80::1%25eth0]:8501")])
def test_ipv6_hosts_keep_their_brackets(host, base):
    assert public_base(None, False, {"Host": host}, URL) == base
    assert public_base(None, True, {"X-Forwarded-Host": host}, URL) == base


def test_an_ipv6_host_without_brackets_is_not_an_address():
    assert not valid_base("http://2001:db8::5")
    assert public_base(None, False, {"Host": "2001:db8::5"}, URL) == "http://localhost:8501"


@pytest.mark.parametrize("base", ["http://localhost:8501", "http://LOCALHOST", "http://127.0.0.1",
                                  "http://127.8.9.10:8501", "http://[::1]:8501",
                                  "http://0.0.0.0:8501", "http://[::]", "http://app.localhost",
                                  "http://[::ffff:127.0.0.1]"])
def test_loopback_addresses_are_found(base):
    assert is_loopback(base)


@pytest.mark.parametrize("base", ["http://192.168.1.20:8501", "http://10.0.0.5",
                                  "https://lens.school.example", "http://[2001:db8::5]",
                                  "http://localhost.school.example", "http://128.0.0.1"])
def test_network_addresses_are_not_loopback(base):
    assert not is_loopback(base)


def test_the_teacher_is_told_of_an_ignored_setting_and_of_a_loopback_link():
    assert link_problems(None, "http://10.0.0.5:8501") == ()
    assert link_problems("", "http://localhost:8501") == ("link_loopback",)
    assert link_problems("lens.example", "http://10.0.0.5:8501") == ("public_url_ignored",)
    assert link_problems("nope", "http://127.0.0.1:8501") == ("public_url_ignored",
                                                              "link_loopback")
    assert link_problems("http://10.0.0.5:8501", "http://10.0.0.5:8501") == ()


@pytest.mark.parametrize("params, first", [({"class": "ABCD2345"}, True), ({"class": " "}, False),
                                           ({}, False), ({"lang": "zh"}, False)])
def test_the_join_form_comes_first_from_a_join_link(params, first):
    assert join_first(params) is first


def test_the_docs_name_the_join_links_settings_and_link_to_their_section():
    """docs/classroom.md says where the join link's address comes from and points at the
    section of docs/deployment.md that says how to set it (a renamed variable breaks this)."""
    root = Path(__file__).resolve().parent.parent / "docs"
    classroom = (root / "classroom.md").read_text(encoding="utf-8")
    deployment = (root / "deployment.md").read_text(encoding="utf-8")
    for doc in (classroom, deployment):
        assert PUBLIC_URL_ENV in doc and PROXY_ENV in doc
    anchors = re.findall(r"\(deployment\.md#([a-z0-9-]+)\)", classroom)
    headings = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-")
                for h in re.findall(r"^#+ (.+)$", deployment, flags=re.M)}
    assert anchors and set(anchors) <= headings
    assert "CLASS_ENDED" in classroom and "join_first" in classroom


def test_the_loopback_warning_suggests_this_machines_network_address():
    assert lan_suggestion("http://127.0.0.1:8611", "10.1.2.3") == "http://10.1.2.3:8611"
    assert lan_suggestion("https://localhost", "10.1.2.3") == "https://10.1.2.3"
    assert lan_suggestion("http://localhost:8501", None) == "http://192.168.1.20:8501"
    found = lan_address()  # this machine's: a network address, never a loopback one
    assert found is None or (re.fullmatch(r"\d+\.\d+\.\d+\.\d+", found)
                             and not is_loopback(f"http://{found}")), found

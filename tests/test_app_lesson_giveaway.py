"""Lesson mode gives nothing away (issue 36, item 2), and names a misconception (item 4).

For every task of every step, on three configurations and in both languages: while the task is
open, the withheld answer is nowhere in what the page sent — every element's text, label,
help (tooltip), option and value, searched in every formatting the texts use (a shape as
"a × b", "[a, b]", its product with or without thousands separators, in 万; a share in %; a
patch as "patch j" / "图像块 j"; the reveal's reason and every misconception's message, filled
with the measured numbers). And "Check my answer" with the inputs untouched records nothing and
asks for an answer.

Then a misconception answer is recognised in the app and its message shown, in English and 中文.
"""

from __future__ import annotations

import re

import pytest

from lens.i18n import translate
from lens.lesson.tasks import Task, mistake, task_texts
from lens.steps import STEPS
from tests.support.apptest_helpers import SMALL, assert_clean
from tests.test_app_lesson import keyed, lesson_page, open_tasks, records

# A small model whose answers coincide with none of its settings' own numbers (SMALL's 16 tokens
# would be "16 × 16" scores beside its 16 × 16-pixel patches; its 16 × 32 concat, 512 values,
# is a choice of the d_model menu): the search would find the setting, not a give-away.
SMALL_APART = {**SMALL, "image_size": "96"}  # 36 tokens, d_model 32, 2 heads, 2 layers
CONFIGS = {"defaults": {}, "small": SMALL_APART, "vit": {"weights": "vit_tiny_test"}}


@pytest.fixture(autouse=True)
def keep_tasks(monkeypatch):
    """Every task the page builds (its right answer and values), kept in the session for the
    test to search for — the Task itself, never an answer computed here."""
    import lens.lesson.ui.cards as lesson  # noqa: PLC0415

    real = lesson.current

    def current(ctx, spec):
        import streamlit as st  # noqa: PLC0415

        asked = real(ctx, spec)
        if asked is not None:
            st.session_state.setdefault("_lesson_tasks", {})[asked[0].id] = asked[0]
        return asked

    monkeypatch.setattr(lesson, "current", current)


def strings(message) -> list[str]:
    """Every string (and bytes as UTF-8) field of a protobuf message, nested ones too."""
    out: list[str] = []
    for field, value in message.ListFields():
        values = value if field.is_repeated else [value]
        for v in values:
            if isinstance(v, str):
                out.append(v)
            elif isinstance(v, bytes):
                out.append(v.decode("utf-8", "replace"))
            elif hasattr(v, "ListFields"):
                out += strings(v)
            else:
                out.append(str(v))  # a number: a starting value, a bound
    return out


def sent_text(at) -> str:
    """Everything the page's elements carry, as text: every field of each element's message
    (body, label, help, options, value, a component's arguments) — what reaches the browser."""
    parts: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "ListFields"):
            parts.extend(strings(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(parts)


def number(v: float) -> list[str]:
    """A number in the ways a text may write it: 401408, 401,408, 401 408, 40.1408 万."""
    if not float(v).is_integer():
        return [f"{v:g}"]
    n = int(v)
    forms = [str(n), f"{n:,}", f"{n:,}".replace(",", " "), f"{n:,}".replace(",", "\u202f")]
    if n >= 10_000:
        forms += [f"{n / 10_000:g} 万", f"{n / 10_000:g}万"]
    return forms


def bounded(form: str) -> str:
    """A regex of `form` not inside a longer number."""
    return rf"(?<![\d.,]){re.escape(form)}(?![\d]|[.,]\d)"


def forbidden(task: Task, lang: str) -> list[str]:
    """Regexes of what would give `task`'s answer away: the answer in every formatting, and
    the reveal's texts."""
    return answer_patterns(task) + text_patterns(task, lang)


def answer_patterns(task: Task) -> list[str]:
    out: list[str] = []
    if task.kind == "number":
        parts = [float(p) for p in task.answer]  # type: ignore[union-attr]
        if len(parts) == 2:
            a, b = (str(int(p)) if p.is_integer() else f"{p:g}" for p in parts)
            for pattern in (f"{a} × {b}", f"{a}×{b}", f"{a} x {b}", f"[{a}, {b}]",
                            f"({a}, {b})", f"{a} by {b}", f"{a} 行"):
                out.append(bounded(pattern))
            out += [bounded(f) for f in number(parts[0] * parts[1])]
        else:
            v = number(parts[0])[0]
            out += [rf"=\s*{bounded(v)}", rf"{bounded(v)}\s*(tokens|patches|个词元|个图像块)",
                    rf"(d_k|d_head)\s*=\s*{bounded(v)}"]
    elif task.kind == "estimate":
        share = float(task.answer)  # type: ignore[arg-type]
        out += [bounded(f"{share:.1f}"), bounded(f"{share:.0f} %"), bounded(f"{share:.0f}%")]
    elif task.kind == "patch":
        out.append(rf"(patch|图像块)\s*{bounded(str(task.answer))}")
    return out


def text_patterns(task: Task, lang: str) -> list[str]:
    words, values = task_texts(lang, task), task.revealed()
    texts = [words(task.text("why"), **values)]
    names = [n for n, _ in task.mistakes] + [o for o in task.options if o != task.answer]
    texts += [words(f"{task.text_id}_if_{n}", **values) for n in names]
    return [re.escape(t[:60]) for t in texts]  # the reveal's reason, each message


def giveaways(at, task: Task, lang: str) -> list[str]:
    text = sent_text(at)
    return [p for p in forbidden(task, lang) if re.search(p, text)]


def check_untouched(at, task_id: str, lang: str) -> None:
    """Check with nothing entered: no record, and the card asks for an answer."""
    at.button(key=f"lesson_check_{task_id.replace('.', '_')}").click().run()
    assert task_id not in records(at), f"{task_id}: untouched inputs were judged"
    warnings = [w.value for w in at.warning]
    assert translate("answer_first", lang, "lesson") in warnings, (task_id, warnings)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("page", [p.id for p in STEPS])
def test_no_task_gives_its_answer_away_and_untouched_inputs_are_not_judged(page, config, lang,
                                                                          request):
    if config == "vit":
        request.getfixturevalue("with_checkpoint")
    at = lesson_page(page, lang=lang, **CONFIGS[config])
    assert_clean(at)
    asked = []
    while open_now := open_tasks(at):
        task_id = open_now[0]
        asked.append(task_id)
        task = at.session_state["_lesson_tasks"][task_id]
        assert giveaways(at, task, lang) == [], (task_id, config, lang)
        check_untouched(at, task_id, lang)
        at.button(key=f"lesson_show_{task.text_id}").click().run()  # on to the next
        assert_clean(at)
    assert asked and all(t in records(at) for t in asked)


def test_the_search_finds_an_answer_in_every_formatting():
    """The give-away search is not blind: each formatting of an answer is found."""
    shape = Task((196.0, 2048.0), {}, ("page",), id="ffn.hidden", kind="number", page="ffn")
    for text in ("ffn_hidden has 196 × 2048 = 401408 values", "401,408 values", "40.1408 万个",
                 "[196, 2048]"):
        assert any(re.search(p, text) for p in answer_patterns(shape)), text
    assert not any(re.search(p, "1196 × 20480 and 4014080") for p in answer_patterns(shape))
    one = Task((64.0,), {}, ("page",), id="qkv.d_head", kind="number", page="qkv")
    assert any(re.search(p, "d_k = 64") for p in answer_patterns(one))
    assert not any(re.search(p, "d_model options 64, 128") for p in answer_patterns(one))
    share = Task(49.5, {}, ("page",), id="ffn.relu", kind="estimate", page="ffn")
    assert any(re.search(p, "starts at 49.5") for p in answer_patterns(share))


# --- a misconception named in the app --------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_misconception_answer_is_recognised_and_its_message_shown(lang):
    at = lesson_page("qkv", lang=lang)
    task = at.session_state["_lesson_tasks"]["qkv.d_head"]
    d, h = task.values["d"], task.values["h"]
    box = next(n for n in at.number_input if n.key and n.key.startswith("lesson_in_qkv_d_head_"))
    box.set_value(d * h)  # each head the full width: h · d_model
    at.button(key="lesson_check_qkv_d_head").click().run()
    assert_clean(at)
    record = records(at)["qkv.d_head"]
    assert record.answered and not record.right and mistake(task, record.given) == "times"
    message = translate("qkv_d_head_if_times", lang, "qkv", **task.values)
    assert message in [i.value for i in at.info]

    # a choice: the wrong option's own message, with the experiment's numbers
    radio = next(r for r in at.radio if r.key and r.key.startswith("lesson_in_qkv_slip_"))
    radio.set_value("grows")
    at.button(key="lesson_check_qkv_slip").click().run()
    assert_clean(at)
    slip = at.session_state["_lesson_tasks"]["qkv.slip"]
    message = translate("qkv_slip_if_grows", lang, "qkv", **slip.revealed())
    assert message in [i.value for i in at.info]
    assert not records(at)["qkv.slip"].right
    assert any(k.startswith("lesson_again_qkv_slip") for k in keyed(at))

"""The lesson keeps its secrets across the whole app (issue 50, item 1): no place beyond a step's
own page shows the answer of a question still ahead.

tests/test_app_lesson_giveaway.py checks each step's own page while its task is open. Here, for
every point of the walk where the learner is about to start a step — the questions of every
step before it answered or shown —, on the default model, a small one (SMALL below: its
answers coincide with none of its settings' own numbers) and a ViT (the suite's test
checkpoint), in English and 中文, what the learner can open besides that step says nothing of a
pending question's answer:

- the walk's first page (the overview) as the lesson shows it, and its sidebar (the advanced
  settings open: their derived values);
- the walk's PDF: the text of every sheet it would hold and of its title page (from the same
  functions the PDF is made from, `lens.handout.book.sheets_for` and `lens.handout.ui`);
- the first visit, before the learner has chosen the lesson or a free walk, where everything is
  ahead.

"The answer" is every formatting of a number task's answer (a shape as its pair, "196 × 256",
"196×256", "(196, 256)", …, its product with thousands separators or in 万; a single number as
a whole token after "=" or before "tokens"/"个词元") and the first words of every pending task's
reveal and misconception messages. The study note's own lines, quoted as written in its
expander, are the learner's material and are left out of the search.

One answer is left out by design: multihead.concat's [T × d_model] is the shape of the stream x
itself, which every step before it shows (x0 on the embedding's page, Q's input on Q, K, V's);
its question asks why the heads side by side give it back.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace

import pytest

from lens.handout.book import sheets_for
from lens.handout.ui import shown, title_page
from lens.lesson.ahead import steps_ahead
from lens.lesson.progress import URL_KEY, Record, decode, encode
from lens.note import note_markdown
from lens.steps import PAGES, STEPS, tasks_for
from tests.support.apptest_helpers import assert_clean, new_app, shown_record
from tests.test_app_lesson import CHECK_SKIPPED
from tests.test_app_lesson_giveaway import answer_patterns, sent_text, text_patterns
from tests.test_lesson_tasks import FIXED, context

pytestmark = pytest.mark.slow

# small: 36 tokens of 16 × 16 grey pixels, d_model 128, 2 heads of 64, d_ff 512, 2 layers — no
# answer equal to another step's numbers (SMALL_APART's d_k, 16, is its patch side: "= 16")
SMALL = {"image_size": 96, "patch_size": 16, "d_model": 128, "n_heads": 2, "n_layers": 2}
CONFIGS = {"defaults": {}, "small": SMALL, "vit": {"weights": "vit_tiny_test"}}
SAME_AS_THE_STREAM = {"multihead.concat"}  # see the module's docstring


def steps_with_tasks(settings: dict) -> list[str]:
    cfg = context(STEPS[0].id, **settings).cfg
    return [p.id for p in STEPS if tasks_for(p.id, cfg)]


def shown_records(settings: dict, before: str) -> dict[str, Record]:
    """Every task of the steps before step `before`, shown ("Show me")."""
    ctx = context(STEPS[0].id, **settings)
    order = [p.id for p in STEPS]
    out = {}
    for page in order[:order.index(before)]:
        for spec in tasks_for(page, ctx.cfg):
            out[spec.id] = shown_record(spec)
    return out


def pending(settings: dict, recorded: dict) -> list:
    """The pending tasks, asked as the app asks them (their answers, their reveal's texts)."""
    out = []
    for page in steps_with_tasks(settings):
        ctx = context(page, **settings)
        for spec in tasks_for(page, ctx.cfg):
            if spec.id in recorded or spec.id in SAME_AS_THE_STREAM:
                continue
            task = spec.ask(ctx, FIXED)
            if task is not None:
                out.append(task)
    return out


def without_note(text: str) -> str:
    """The text sent, the study note's own lines (its expander, every step's) left out."""
    for info in PAGES.values():
        quoted = note_markdown(info.note)
        if quoted:
            text = text.replace(quoted, "")
    return text


def found(text: str, tasks: list, lang: str) -> list[tuple[str, str]]:
    """(task, the text around the answer) for each pending answer found in `text`."""
    hits = []
    for task in tasks:
        patterns = text_patterns(task, lang)
        if task.kind == "number":
            patterns = answer_patterns(task) + patterns
        for p in patterns:
            if m := re.search(p, text):
                hits.append((task.id, text[max(0, m.start() - 80):m.end() + 40]))
    return hits


def sheet_text(ctx) -> str:
    """Every text the walk's PDF would print for `ctx` (its sheets, its title page), the
    note's own lines left out."""
    from datetime import date

    parts = list(title_page(ctx, {}, date(2026, 1, 1)).lines)
    for sheet in sheets_for(ctx):
        for f in fields(sheet):
            if f.name == "note":
                continue
            value = getattr(sheet, f.name)
            values = value if isinstance(value, tuple | list) else (value,)
            parts += [v for v in values if isinstance(v, str)]
    return "\n".join(parts)


@pytest.mark.parametrize(("config", "lang"), [("defaults", "zh"), ("small", "en"),
                                               ("vit", "en")])  # both languages, run time
def test_no_place_beyond_a_step_shows_a_pending_answer(config, lang, request):
    if config == "vit":
        request.getfixturevalue("with_checkpoint")
    settings = CONFIGS[config]
    query = {k: str(v) for k, v in settings.items()}
    checked = 0
    for step in steps_with_tasks(settings):
        recorded = shown_records(settings, step)
        assert decode(encode(recorded)).keys() == recorded.keys()  # the link keeps them all
        tasks = pending(settings, recorded)
        at = new_app(lesson="1", lang=lang, **CHECK_SKIPPED, **query,
                     **({URL_KEY: encode(recorded)} if recorded else {}))
        at.run()
        assert_clean(at)
        hits = found(without_note(sent_text(at)), tasks, lang)
        assert hits == [], (config, lang, f"before {step}", hits)
        # the walk's PDF as it would be made now
        ctx = context(STEPS[0].id, lang=lang, lesson=True, **settings)
        ctx = shown(replace(ctx, ahead=steps_ahead(ctx.cfg, recorded)))
        hits = found(sheet_text(ctx), tasks, lang)
        assert hits == [], (config, lang, f"PDF before {step}", hits)
        checked += 1
    assert checked == len(steps_with_tasks(settings)) >= 8


def test_the_first_visit_offers_the_choice_alone():
    """Before the choice, the first page shows the choice and no answer of any question, in
    English and, the language changed in the sidebar, in 中文; then a free walk shows it all."""
    at = new_app(first_visit=True)
    at.run()
    for lang in ("en", "zh"):
        if lang == "zh":
            at.sidebar.radio(key="lang").set_value("zh").run()
        assert_clean(at)
        assert [b.key for b in at.button if b.key in ("lesson_on", "lesson_off")] == [
            "lesson_on", "lesson_off"]
        assert not at.get("image"), f"{lang}: a picture before the choice"
        hits = found(without_note(sent_text(at)), pending({}, {}), lang)
        assert hits == [], (lang, hits)
    at.button(key="lesson_off").click().run()  # a free walk: the overview, whole
    assert_clean(at)
    assert at.get("image") and "196 × 256" in sent_text(at)

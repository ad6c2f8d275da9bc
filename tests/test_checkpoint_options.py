"""Checkpoints without guessing (issue 40, item 4): `scripts/app --checkpoint FILE --n-heads H`
(through `lens.serve`, what scripts/app runs) gives a torchvision file its head count; a model
whose pixel normalisation is guessed says so where its prediction is shown, with the fix; the
refusal names the config.json keys with an example; two files of one name are told apart by
their folders."""

from __future__ import annotations

import json
import os

import pytest
from safetensors.numpy import save_file

from encoder_core import ParamsError
from encoder_core.checkpoints.load import load_checkpoint
from lens import traces
from lens.models import CHECKPOINTS_ENV, HEADS_ENV, checkpoint_heads, load_models, model_ids
from lens.serve import split_checkpoints
from tests.support.apptest_helpers import assert_clean, new_app, open_page
from tests.support.vit_dicts import torchvision_state_dict

# A one-channel torchvision ViT of no standard size (an MNIST-like model): its file never says
# its heads, and d_model 128 × 2 layers is none of torchvision's sizes.
MNIST_VIT = dict(d=128, C=1, P=16, grid=14, L=2, d_ff=256)


def torchvision_file(folder, name="vit_weights.safetensors", config=None) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    save_file(torchvision_state_dict(**MNIST_VIT), str(path))
    if config is not None:
        (folder / "config.json").write_text(json.dumps(config))
    return str(path)


def test_n_heads_follows_the_checkpoint_it_is_for():
    assert split_checkpoints(["--checkpoint", "a", "--n-heads", "2", "--checkpoint=b",
                              "--n-heads=4", "--server.port", "1"]) == (
        ["a", "b"], {"a": 2, "b": 4}, ["--server.port", "1"])
    with pytest.raises(ValueError, match="after the --checkpoint FILE"):
        split_checkpoints(["--n-heads", "2", "--checkpoint", "a"])
    for bad in ("two", "0", "-1", ""):
        with pytest.raises(ValueError, match="positive whole number"):
            split_checkpoints(["--checkpoint", "a", "--n-heads", bad])


def test_the_launcher_hands_the_head_count_to_the_app(tmp_path, monkeypatch, capsys):
    """lens.serve's main (what scripts/app execs) puts the resolved path's head count in the
    environment the app's registry reads; a misplaced --n-heads stops it with the fix."""
    from lens import serve

    path = torchvision_file(tmp_path)
    monkeypatch.setattr(traces, "warming", lambda: None)
    monkeypatch.setattr(serve.threading, "Thread", lambda **kw: type(
        "T", (), {"start": lambda self: None})())
    monkeypatch.setattr("streamlit.web.cli.main", lambda: 0)
    for name in (CHECKPOINTS_ENV, HEADS_ENV):  # serve.main sets them in os.environ: recorded
        monkeypatch.setenv(name, "")  # here first, so that the test's end takes them away again
        monkeypatch.delenv(name)  # (a delenv of an unset name records nothing)
    assert serve.main(["--n-heads", "2", "--checkpoint", path]) == 2
    assert "--checkpoint FILE --n-heads H" in capsys.readouterr().err
    assert serve.main(["--checkpoint", path, "--n-heads", "2"]) == 0
    assert checkpoint_heads() == {os.path.realpath(path): 2}
    models, problems = load_models([os.environ[CHECKPOINTS_ENV]], heads=checkpoint_heads())
    assert problems == []
    (model,) = models.values()
    assert model.cfg.n_heads == 2 and model.info.source("n_heads") == "argument"


def test_the_refusal_names_the_options_and_the_config_keys_with_an_example(tmp_path):
    """The example's head count is a placeholder, H, said to be the model's own: a number there
    would be copied as is, and a wrong one loads silently with the wrong heads. With H filled in
    it is a config.json the loader takes as it is; copied with the H left in, it is refused."""
    path = torchvision_file(tmp_path)
    with pytest.raises(ParamsError) as err:
        load_checkpoint(path)
    text = str(err.value)
    assert "scripts/app --checkpoint FILE --n-heads H" in text
    example = text[text.index('{"num_heads"'):text.index("}}") + 2]
    assert example.startswith('{"num_heads": H, ') and "H: the number of heads the model" in text
    (tmp_path / "config.json").write_text(example)  # copied as is
    with pytest.raises(ParamsError, match="not valid JSON"):
        load_checkpoint(path)
    filled = json.loads(example.replace('"num_heads": H', '"num_heads": 2'))  # MNIST_VIT's 2
    assert set(filled) == {"num_heads", "pretrained_cfg"}
    assert len(filled["pretrained_cfg"]["mean"]) == len(filled["pretrained_cfg"]["std"]) == 1
    (tmp_path / "config.json").write_text(json.dumps(filled))
    cfg, _, info = load_checkpoint(path)
    assert cfg.n_heads == 2 and info.guessed_normalisation() == ""
    assert cfg.pixel_mean == tuple(filled["pretrained_cfg"]["mean"])


def test_num_heads_alone_loads_with_the_normalisation_guessed_and_said(tmp_path):
    cfg, _, info = load_checkpoint(torchvision_file(tmp_path, config={"num_heads": 2}))
    assert cfg.pixel_mean == (0.5,) and info.source("pixel_mean") == "inferred"
    assert "1 channel" in info.guessed_normalisation()
    assert any("guessed" in n and "pretrained_cfg" in n for n in info.notes)  # the CLI's note


def test_two_files_of_one_name_are_told_apart_by_their_folders(tmp_path):
    a = torchvision_file(tmp_path / "mnist", config={"num_heads": 2})
    b = torchvision_file(tmp_path / "fashion", config={"num_heads": 4})
    c = torchvision_file(tmp_path / "other", "solo.safetensors", config={"num_heads": 2})
    assert model_ids([a, b, c]) == ["mnist-vit_weights", "fashion-vit_weights", "solo"]
    models, problems = load_models([a, b])
    assert problems == [] and list(models) == ["mnist-vit_weights", "fashion-vit_weights"]
    assert [m.place for m in models.values()] == ["mnist/vit_weights.safetensors",
                                                  "fashion/vit_weights.safetensors"]
    assert [m.cfg.n_heads for m in models.values()] == [2, 4]


@pytest.mark.parametrize("lang, words", [("en", "normalisation is a guess"),
                                         ("zh", "像素归一化是猜的")])
def test_a_guessed_normalisation_is_said_where_the_prediction_is(tmp_path, serve_checkpoints,
                                                                lang, words):
    guessed = torchvision_file(tmp_path / "guessed", config={"num_heads": 2})
    given = torchvision_file(tmp_path / "given", config={
        "num_heads": 2, "pretrained_cfg": {"mean": [0.1307], "std": [0.3081]}})
    serve_checkpoints(guessed, given)
    for mid, said in (("guessed-vit_weights", True), ("given-vit_weights", False)):
        for page in ("vit", "overview"):
            at = open_page(new_app(weights=mid, lang=lang), page)
            assert_clean(at)
            warnings = " ".join(w.value for w in at.warning)
            assert (words in warnings) is said, (mid, page, warnings)
            if said:
                assert '"pretrained_cfg"' in warnings and "0.5" in warnings
        files = " ".join(c.value for c in at.sidebar.caption)
        assert f"{mid.split('-')[0]}/vit_weights.safetensors" in files

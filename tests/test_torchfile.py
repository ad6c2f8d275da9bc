"""encoder_core.checkpoints.torchfile: a torch.save file reads into the same numbers as torch
gives, and a pickle that asks to run anything else is refused without running it (a sentinel
file proves it)."""

import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from encoder_core.checkpoints.tensorfile import read_tensors
from encoder_core.checkpoints.torchfile import read_torch_zip, rebuild_tensor
from encoder_core.params import ParamsError
from tests.support.torch_shim import torch

pytestmark = pytest.mark.parity  # imports torch: not in the fast lane


class RunsACommand:
    """Unpickling this calls os.system(command): what a hostile checkpoint does."""

    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def torch_style_zip(path, payload: bytes, storages: dict[str, bytes] | None = None) -> None:
    """A zip laid out as torch.save writes it (archive/data.pkl, archive/data/N, byteorder)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("archive/data.pkl", payload)
        zf.writestr("archive/byteorder", "little")
        for key, blob in (storages or {}).items():
            zf.writestr(f"archive/data/{key}", blob)


def test_torch_save_reads_as_the_same_numbers(tmp_path):
    sd = collections.OrderedDict(
        a=torch.randn(2, 3), b=torch.randn(3, 2).t(), c=torch.randn(4).half(),
        d=torch.randn(5).bfloat16(), e=torch.randn(2, 3, 4)[:, 1], f=torch.randn(3).double(),
        p=torch.nn.Parameter(torch.randn(2)), n=torch.tensor(7))
    sd["view"] = sd["a"][1]  # shares storage with a, at an offset
    torch.save({"model": sd, "epoch": 3}, tmp_path / "ck.pth")
    got = read_torch_zip(tmp_path / "ck.pth")
    assert got["epoch"] == 3
    for k, v in sd.items():
        ref = v.detach().float().numpy() if v.is_floating_point() else v.numpy()
        np.testing.assert_array_equal(np.asarray(got["model"][k], dtype=ref.dtype), ref, err_msg=k)
        assert got["model"][k].shape == tuple(v.shape)


def test_module_state_dict_with_metadata_reads(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.LayerNorm(2))
    torch.save(model.state_dict(), tmp_path / "m.pth")  # pickles _metadata through BUILD
    got = read_torch_zip(tmp_path / "m.pth")
    np.testing.assert_array_equal(got["0.weight"], model[0].weight.detach().numpy())


@pytest.mark.parametrize("inside_zip", [False, True])
def test_a_pickle_calling_os_system_is_refused_and_never_runs(tmp_path, inside_zip):
    sentinel = tmp_path / "SENTINEL"
    payload = pickle.dumps({"w": RunsACommand(f"touch {sentinel}")}, protocol=2)
    path = tmp_path / "evil.pth"
    if inside_zip:
        torch_style_zip(path, payload)
    else:
        path.write_bytes(payload)  # the old, non-zip torch format
    with pytest.raises(ParamsError) as err:
        read_tensors(path)
    assert "system" in str(err.value) or "old pickle format" in str(err.value)
    assert "torch.load" in str(err.value)  # says how to convert
    assert not sentinel.exists()


def test_every_global_off_the_whitelist_is_refused(tmp_path):
    sentinel = tmp_path / "SENTINEL"
    for payload in (
        pickle.dumps(eval, protocol=2),  # a builtin
        b"\x80\x02cbuiltins\nexec\nq\x00X\x04\x00\x00\x00passq\x01\x85q\x02Rq\x03.",
        pickle.dumps(collections.Counter(a=1), protocol=2),
        pickle.dumps({"x": RunsACommand(f"touch {sentinel}")}, protocol=4),  # STACK_GLOBAL
    ):
        torch_style_zip(tmp_path / "g.pth", payload)
        with pytest.raises(ParamsError, match="asks to run|Cannot read"):
            read_tensors(tmp_path / "g.pth")
    assert not sentinel.exists()


def test_build_on_anything_but_a_state_dict_is_refused(tmp_path):
    payload = b"\x80\x02]q\x00}q\x01b."  # an empty list, then BUILD with a dict state
    torch_style_zip(tmp_path / "b.pth", payload)
    with pytest.raises(ParamsError, match="state of an object"):
        read_tensors(tmp_path / "b.pth")


def test_storage_sizes_and_views_are_bounds_checked(tmp_path):
    storage = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(rebuild_tensor(storage, 1, (2, 2), (2, 1)), [[1, 2], [3, 4]])
    with pytest.raises(ParamsError, match="past the end"):
        rebuild_tensor(storage, 3, (2, 2), (2, 1))
    with pytest.raises(ParamsError, match="impossible layout"):
        rebuild_tensor(storage, 0, (2,), (-1,))
    with pytest.raises(ParamsError, match="claims"):
        rebuild_tensor(storage, 0, (10**6, 10**6), (0, 0))  # a broadcast bomb
    # a storage whose zip entry is shorter than its declared numel
    torch.save({"w": torch.randn(4)}, tmp_path / "ok.pth")
    bad = zipfile.ZipFile(tmp_path / "bad.pth", "w")
    with zipfile.ZipFile(tmp_path / "ok.pth") as zf, bad as out:
        for info in zf.infolist():
            data = zf.read(info)
            out.writestr(info.filename, data[:8] if "/data/0" in info.filename else data)
    with pytest.raises(ParamsError, match="should hold 16 bytes"):
        read_tensors(tmp_path / "bad.pth")


def test_a_zip_without_data_pkl_is_not_a_torch_file(tmp_path):
    with zipfile.ZipFile(tmp_path / "z.pth", "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(ParamsError, match="neither"):
        read_tensors(tmp_path / "z.pth")
    buf = io.BytesIO(b"PK\x03\x04 broken zip")
    (tmp_path / "broken.pth").write_bytes(buf.getvalue())
    with pytest.raises(ParamsError, match="damaged"):
        read_tensors(tmp_path / "broken.pth")


OPCODES = [bytes([op.code.encode("latin-1")[0]]) for op in __import__("pickletools").opcodes]


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(OPCODES) | st.binary(max_size=6), max_size=30))
def test_random_pickles_give_a_params_error_or_plain_data(tmp_path, pieces):
    torch_style_zip(tmp_path / "fuzz.pth", b"\x80\x02" + b"".join(pieces) + b".")
    try:
        read_tensors(tmp_path / "fuzz.pth")
    except ParamsError:
        pass

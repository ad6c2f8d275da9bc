"""Test-only: import timm and torchvision beside the CPU build of torch.

`import timm` imports torchvision. The PyPI torchvision wheel is linked against CUDA and cannot
load its compiled operators beside the CPU torch these machines carry (torch 2.13.0+cpu), and its
import then fails while registering fake kernels for `torchvision::nms` and `torchvision::qnms`
("operator torchvision::nms does not exist"). Defining the two operator schemas first lets the
import succeed; the ViT code paths never call them. The `Library` object must stay alive (a
module global) or the definitions are dropped.

Never import this outside `tests/` and `benchmarks/`: torch is a test-only dependency.
"""

import torch

TORCHVISION_OPS = torch.library.Library("torchvision", "DEF")
TORCHVISION_OPS.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
TORCHVISION_OPS.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")

import timm  # noqa: E402  (must follow the definitions above)
import torchvision  # noqa: E402  (the same: timm has imported it already)

__all__ = ["TORCHVISION_OPS", "timm", "torch", "torchvision"]

"""English / 中文: every label, caption and explanation goes through `translate`.

Texts are pairs (English, 中文). Code identifiers and symbols (W_Q, d_model, softmax) stay as
they are in both languages. Each page keeps its own texts next to its layout; the words every
page shares live here. A page's keys may not reuse a common key (`check_page_texts`), so a
page can never change a word of the sidebar or the header.
"""

from __future__ import annotations

import re

from .settings import LANGS

LANG_NAMES: dict[str, str] = dict(zip(LANGS, ("English", "中文"), strict=True))

Texts = dict[str, tuple[str, str]]

COMMON: Texts = {
    "app_title": ("Encoder Lens — a Transformer encoder, step by step, on an image",
                  "Encoder Lens 编码器透镜——在图像上逐步查看 Transformer 编码器"),
    "language": ("Language / 语言", "Language / 语言"),
    "image": ("Image", "图像"),
    "image_source": ("Image source", "图像来源"),
    "source_default": ("Built-in photo", "内置照片"),
    "source_upload": ("Upload your own", "上传图像"),
    "source_sample": ("Generated shape (trained model)", "生成的形状（训练模型）"),
    "upload": ("Upload an image (PNG, JPEG, WebP, BMP, TIFF, GIF)",
               "上传图像（PNG、JPEG、WebP、BMP、TIFF、GIF）"),
    "upload_hint": ("Upload a file in the sidebar; until then the built-in photo is shown.",
                    "请在侧边栏上传文件；在此之前显示内置照片。"),
    "bad_upload": ("That upload could not be used: {msg} The app keeps showing {name}.",
                   "无法使用该上传文件：{msg} 应用继续显示 {name}。"),
    "showing": ("Showing: {name}", "当前图像：{name}"),
    "model": ("Model", "模型"),
    "advanced": ("Advanced: the architecture (d_model, h, layers, …)",
                 "高级：模型结构（d_model、h、层数……）"),
    "weights": ("Weights", "权重"),
    "weights_random": ("random (seeded)", "随机（固定种子）"),
    "weights_trained": ("trained on shapes", "在形状数据上训练"),
    "trained_locked": (
        "Trained weights fix the architecture to the one they were trained with ({arch}); "
        "the architecture controls are locked.",
        "训练好的权重决定了模型结构（{arch}），结构相关的控件已锁定。"),
    "checkpoint_locked": (
        "A Vision Transformer checkpoint: its weights fix the architecture ({arch}); the "
        "architecture controls are locked.",
        "Vision Transformer 检查点：它的权重决定了模型结构（{arch}），结构相关的控件已锁定。"),
    "checkpoint_caption": ("Weights: the pretrained Vision Transformer {name}.",
                           "权重：预训练的 Vision Transformer {name}。"),
    "checkpoint_head_aside": (
        "Its classification head is set aside: the pages show what the encoder computes, up to "
        "its output tokens.",
        "它的分类头未被使用：各页展示编码器的计算，直到输出的词元为止。"),
    "checkpoint_problem": ("A checkpoint could not be loaded and is left out: {problem}",
                           "有一个检查点无法加载，已略过：{problem}"),
    "colour": ("Colour", "颜色"),
    "grey": ("grey (1 channel, as in the note)", "灰度（1 通道，同笔记）"),
    "rgb": ("RGB (3 channels)", "RGB（3 通道）"),
    "image_size": ("Image size S (image_size)", "图像边长 S (image_size)"),
    "patch_size": ("Patch size P (patch_size)", "图像块边长 P (patch_size)"),
    "d_model": ("d_model — width of each token vector", "d_model — 每个向量的维度"),
    "n_heads": ("h — number of heads (n_heads)", "h — 头数 (n_heads)"),
    "n_layers": ("N_layers — encoder layers (n_layers)", "层数 (n_layers)"),
    "d_ff_info": ("d_ff = 4·d_model = {d_ff} (inner width of the FFN)",
                  "d_ff = 4·d_model = {d_ff}（前馈网络内部宽度）"),
    "use_ffn": ("Feed-forward sub-layer (the paper; the note's day 01 has none)",
                "前馈子层（论文有；笔记第一天没有）"),
    "scale": ("Score scaling: divide Q·Kᵀ by", "注意力分数缩放：Q·Kᵀ 除以"),
    "scale_d_k": ("√d_k = √(d_model/h) — the paper", "√d_k = √(d_model/h) — 论文"),
    "scale_d_model": ("√d_model — as written in the note", "√d_model — 笔记的写法"),
    "scale_none": ("1 — no scaling (demo)", "1 — 不缩放（演示）"),
    "use_pe": ("Add the positional encoding", "加上位置编码"),
    "seed": ("Seed of the random weights", "随机权重的种子"),
    # a value that could not be used (lens.settings.Notice): the key, given, used and why
    "notice_link": ("The link's {name} = {given} cannot be used: {why}. Using {used}.",
                    "链接中的 {name} = {given} 无法使用：{why}。改用 {used}。"),
    "notice_change": ("{name} = {given}: {why}. Using {name} = {used}.",
                      "{name} = {given}：{why}。改用 {name} = {used}。"),
    "why_not_a_number": ("it is not a number", "它不是数字"),
    "why_not_a_switch": ("a switch is 1 or 0", "开关只能是 1 或 0"),
    "why_not_an_option": ("the choices are {options}", "可选值为 {options}"),
    "why_not_allowed": ("the allowed values are {options}", "允许的值为 {options}"),
    "why_out_of_range": ("it must be a whole number from {lo} to {hi}",
                         "它必须是 {lo} 到 {hi} 之间的整数"),
    "why_patch_divide": ("the patch size must divide the image size {s} (4 … 1,024 patches)",
                         "图像块边长必须整除图像边长 {s}（4 … 1,024 个图像块）"),
    "why_heads_divide": ("h must divide d_model = {d}", "h 必须整除 d_model = {d}"),
    "why_heads_memory": (
        "with {N} tokens and {L} layers the attention maps would take {gib} GiB, over the "
        "{limit:g} GiB limit",
        "在 {N} 个词元、{L} 层时，注意力图将占用 {gib} GiB，超过 {limit:g} GiB 的上限"),
    "why_locked": ("the trained weights fix the architecture", "训练好的权重固定了模型结构"),
    "why_no_model": ("the model “{name}” is not loaded on this server",
                     "这台服务器没有加载模型“{name}”"),
    "why_no_checkpoint": (
        "the trained model is shipped at training steps {steps} (-1 = the final weights, "
        "step {final})",
        "训练好的模型只提供这些训练步数的权重：{steps}（-1 = 最终权重，即第 {final} 步）"),
    "computing": ("Running the encoder…", "正在运行编码器…"),
    "random_caption": (
        "Weights are random (seed {seed}): the pictures show the mechanism faithfully, "
        "not learned meaning.",
        "权重是随机的（种子 {seed}）：图像如实展示计算机制，但没有学到的含义。"),
    "trained_caption": (
        "Weights trained on generated shapes (circle, square, triangle, cross): attention has "
        "learned to find the shape; on a photo it can only look for shape-like things.",
        "权重在生成的形状（圆、正方形、三角形、十字）上训练：注意力学会了寻找形状；"
        "对照片它只能寻找类似形状的东西。"),
    "trained_caption_step": (
        "The shapes model as it was after {step:,} of its {final:,} training steps: its "
        "attention is still learning to find the shape (step 0 is the random start).",
        "形状模型在训练 {final:,} 步中的第 {step:,} 步时的样子：它的注意力还在学习寻找形状"
        "（第 0 步是随机初始化）。"),
    "new_sample": ("New shape", "换一个形状"),
    "sample_caption": ("A generated image like those the trained model learned from: one shape "
                       "among circle, square, triangle, cross, plus distractors.",
                       "与训练数据同分布的生成图像：圆、正方形、三角形、十字之一，外加干扰物。"),
    "prediction": ("**Prediction: {best}** ({p:.1f} %) — {all}",
                   "**预测：{best}**（{p:.1f} %）—— {all}"),
    "prediction_off_domain": (
        "This model only knows four generated shapes (circle, square, triangle, cross), so on "
        "this image its answer only says which of them the picture is least unlike — not what "
        "it shows: {all}. For a meaningful prediction choose \"Generated shape\" as the image.",
        "这个模型只认识四种生成的形状（圆、正方形、三角形、十字），所以对这张图像，它的回答只说明"
        "图像最不像哪一种——而不是图像里是什么：{all}。要得到有意义的预测，请选择“生成的形状”作为"
        "图像。"),
    "class_circle": ("circle", "圆"), "class_square": ("square", "正方形"),
    "class_triangle": ("triangle", "三角形"), "class_cross": ("cross", "十字"),
    "step_of": ("Step {k} of {n}", "第 {k} 步，共 {n} 步"),
    "prev": ("← Previous step", "← 上一步"),
    "next": ("Next step →", "下一步 →"),
    "reset": ("Reset to defaults", "恢复默认设置"),
    "layer": ("Layer", "层"),
    "head": ("Head", "头"),
    "query": ("Query patch i", "查询图像块 i"),
    "heads_shown": ("Heads to show (at most {k} of the h = {n})",
                    "要显示的头（h = {n} 个中最多 {k} 个）"),
    "head_number": ("head {n}", "头 {n}"),
    "heads_caption": ("There are h = {n} heads; the maps show the {k} chosen above "
                      "(at most {limit} at a time, to keep them readable).",
                      "共有 h = {n} 个头；图中显示上面选中的 {k} 个"
                      "（为保持清晰，一次最多 {limit} 个）。"),
    "layers_shown": ("Layers to show (at most {k} of the {n})",
                     "要显示的层（{n} 层中最多 {k} 层）"),
    "layer_number": ("layer {n}", "第 {n} 层"),
    "layers_caption": ("There are {n} layers; the maps show the {k} chosen above (at most "
                       "{limit} at a time, to keep them readable; by default spread from the "
                       "first to the last).",
                       "共有 {n} 层；图中显示上面选中的 {k} 层（为保持清晰，一次最多 {limit} 层；"
                       "默认从第一层到最后一层均匀选取）。"),
    "query_row": ("Query row", "查询块所在行"),
    "query_col": ("Query column", "查询块所在列"),
    "click_hint": ("Click (or tap) a patch on the image to make it the query; the arrow keys "
                   "move it.",
                   "点击（或轻触）图像上的某个图像块，将其设为查询；方向键可移动它。"),
    "hover_hint": ("Point at a patch: every map shows its attention at once. Click (or tap) to "
                   "make it the query; the arrow keys move it.",
                   "指向某个图像块：所有图立即显示它的注意力。点击（或轻触）将其设为查询；"
                   "方向键可移动它。"),
    "enlarge_hint": ("Click (or tap) a map to see it large; click the large map to close it.",
                     "点击（或轻触）一张图可放大查看；点击放大的图即可关闭。"),
    "scale_each_max": ("each map's largest weight", "每张图自身的最大权重"),
    "scale_to_shared": ("Put all maps on one colour scale", "所有图改用同一个色标"),
    "scale_to_each": ("Give each map its own colour scale", "每张图改用各自的色标"),
    "picker_aria": ("The image cut into patches: choose the query patch",
                    "切成图像块的图像：选择查询图像块"),
    "patch_tip": ("patch {i} (row {r}, column {c})", "图像块 {i}（第 {r} 行，第 {c} 列）"),
    "weight_tip": ("weight", "权重"),
    "tokens": ("token (patch) i", "词元（图像块）i"),
    "keys": ("key token j", "键词元 j"),
    "features": ("feature", "特征维度"),
    "value": ("value", "数值"),
    "pixels_x": ("x (pixels)", "x（像素）"),
    "pixels_y": ("y (pixels)", "y（像素）"),
    "block_avg": ("Shown block-averaged {kr}×{kc} (the matrix has a side over 256).",
                  "按 {kr}×{kc} 分块平均显示（矩阵某边超过 256）。"),
    "note_original": ("The study note, original text (中文)", "笔记原文"),
    "note_none": ("The note's day 01 has no text for this step: it comes from the 2017 paper.",
                  "笔记第一天没有这一步的内容：它来自 2017 年的论文。"),
    "window": ("Inspect the numbers: a 32 × 32 window", "查看数值：32 × 32 窗口"),
    "window_rows": ("first row", "起始行"),
    "window_cols": ("first column", "起始列"),
    "window_caption": ("{name}[{r0}:{r1}, {c0}:{c1}], outlined dashed on the heatmap; colours "
                       "as in the heatmap.",
                       "{name}[{r0}:{r1}, {c0}:{c1}]，在热图上以虚线框出；颜色与热图一致。"),
    "mean_of": ("mean of {k}", "{k} 个的平均"),
    "download_png": ("Download PNG", "下载 PNG"),
    "export": ("Export", "导出"),
    "export_build": ("Prepare the trace (.npz)", "生成中间结果文件 (.npz)"),
    "export_download": ("Download trace.npz ({mb:.1f} MB)", "下载 trace.npz（{mb:.1f} MB）"),
    # lens/hub_ui.py: the named public models and their download (lens/hub.py)
    "hub_title": ("Download a model", "下载模型"),
    "hub_caption": ("Public Vision Transformers from the Hugging Face Hub: each is downloaded "
                    "once into this server's cache and then listed under Weights.",
                    "来自 Hugging Face Hub 的公开 Vision Transformer：每个只需下载一次到这台服务器"
                    "的缓存，之后会列在“权重”中。"),
    "hub_model": ("**{name}** · {mb:.0f} MB · {licence}",
                  "**{name}** · {mb:.0f} MB · 许可证 {licence}"),
    "hub_download": ("Download {name}", "下载 {name}"),
    "hub_downloaded": ("{name}: downloaded", "{name}：已下载"),
    "hub_progress": ("Downloading {name}: {done:.1f} of {total:.1f} MB",
                     "正在下载 {name}：{done:.1f} / {total:.1f} MB"),
    "hub_done": ("{name} is downloaded and now the weights.", "{name} 已下载，现已用作权重。"),
    "hub_offline_hint": ("To use a model offline, download it elsewhere and start with "
                         "scripts/app --checkpoint FILE.",
                         "要离线使用模型，请在别处下载，"
                         "然后用 scripts/app --checkpoint FILE 启动。"),
    "hub_error_offline_mode": ("Downloads are switched off (HF_HUB_OFFLINE): {name} is not in "
                               "the cache. {hint}",
                               "下载已关闭（HF_HUB_OFFLINE）：缓存中没有 {name}。{hint}"),
    "hub_error_no_network": ("No network: {name} could not be downloaded from {detail}. {hint}",
                             "没有网络：无法从 {detail} 下载 {name}。{hint}"),
    "hub_error_refused": ("The model hub refused to send {name} ({detail}). Try again later. "
                          "{hint}",
                          "模型仓库拒绝发送 {name}（{detail}）。请稍后再试。{hint}"),
    "hub_error_not_found": ("{name} was not found on the model hub ({detail}). {hint}",
                            "在模型仓库中找不到 {name}（{detail}）。{hint}"),
    "hub_error_disk": ("{name} could not be saved in the cache ({detail}).",
                       "无法把 {name} 保存到缓存（{detail}）。"),
    "url_upload": ("This link was made with an uploaded image, which a link cannot carry; "
                   "showing the built-in photo. Upload the image again to continue.",
                   "该链接使用的是上传的图像，链接无法携带图像；现显示内置照片。请重新上传图像。"),
    "no_ffn": ("The feed-forward sub-layer is switched off (the note's day-01 layer). "
               "Switch it on in the sidebar to see this step.",
               "前馈子层已关闭（笔记第一天的结构）。请在侧边栏打开以查看此步骤。"),
}


class TextCollisionError(ValueError):
    """A page defines a text key that is also a common one."""


def check_page_texts(owner: str, texts: Texts) -> Texts:
    """`texts` unchanged when none of its keys is a common key; raises TextCollisionError."""
    clash = sorted(set(texts) & set(COMMON))
    if clash:
        raise TextCollisionError(f"{owner}: the text keys {', '.join(clash)} are common keys; "
                            "rename them in the page's TEXT.")
    return texts


def translate(key: str, lang: str, texts: Texts | None = None, **values: object) -> str:
    """The text for `key` in `lang`, from the page's texts first, then COMMON, formatted."""
    pair = (texts or {}).get(key) or COMMON.get(key)
    if pair is None:
        raise KeyError(f"no text for {key!r}")
    text = pair[1] if lang == "zh" else pair[0]
    return text.format(**values) if values else text


# The English words of `encoder_core.analysis.pipeline_steps` (its Step.formula and Step.shape),
# as (pattern, 中文) in the order they are applied: whole phrases first, then the single words
# that name a matrix. Numbers are captured (\1), never listed, so every value passes through;
# identifiers and symbols (softmax, LayerNorm, GELU, attn_out, W_Q, PE, pos_embed, CLS, γ, β)
# stay. ASCII mode: a Chinese character next to a word is not a word character for \b.
FORMULA_ZH: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.ASCII), zh) for pattern, zh in (
        (r"; the CLS row output\[(\d+)\] stands for the image",
         r"；CLS 行（输出[\1]）代表整幅图像"),
        (r"\b(\d+) layers stacked", r"堆叠 \1 层"),
        (r"\b(\d+) layer stacked", r"只有 \1 层"),
        (r" after the last layer", "（在最后一层之后）"),
        (r" \(x not normalised\)", "（x 未归一化）"),
        (r" \(PE off\)", "（不加位置编码）"),
        (r" \(positions off\)", "（不加学到的位置）"),
        (r" on the patch rows ?", "（只加在图像块的行上）"),
        (r" \(none on the registers\) ?", "（寄存器词元不加位置）"),
        (r" \(CLS row: ([^()]*)\)", r"（CLS 行：\1）"),
        (r"softmax\(scores\) row by row", "逐行 softmax(分数)"),
        (r"\b(\d+) heads\b", r"\1 个头"),
        (r"\b(\d+) REG\b", r"\1 个寄存器"),
        (r", mean = ", "，均值 = "),
        (r", std = ", "，标准差 = "),
        (r"\bpixels\b", "像素"),
        (r"\bimage\b", "图像"),
        (r"\bmean\b", "均值"),
        (r"\bstd\b", "标准差"),
        (r"\bpatches\b", "图像块"),
        (r"\btokens\b", "词元"),
        (r"\boutput\b", "输出"),
    ))


def formula_in(text: str, lang: str) -> str:
    """A pipeline step's formula or shape text (`encoder_core.analysis.Step`) in `lang`: as it
    is in English; in 中文 with each English phrase of FORMULA_ZH replaced, numbers and
    identifiers kept."""
    if lang != "zh":
        return text
    for pattern, zh in FORMULA_ZH:
        text = pattern.sub(zh, text)
    return text

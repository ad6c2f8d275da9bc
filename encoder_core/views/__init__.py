"""What the app shows beside the math, derived from a trace (never part of the forward pass):

    rollout.py     attention_rollout: the one rollout (head fusion, discard ratio)
    analysis.py    attention distance, entropy, the scaling demo, PE similarity, per-head
                   contributions, the pipeline's steps and parameter counts
    relevance.py   class-specific relevance per patch from the attention and its gradient:
                   Chefer et al.'s, and vit-explain's gradient rollout (corrected)
    explain.py     one entry of a product written out term by term
    vit_views.py   a real ViT's views: [CLS] attention, keep-mass masks, token norms, …
    vit_steps.py   what a ViT adds to the note's steps (a normalised pixel, the GELU gate, …)
    heads_off.py   the encoder run again from a layer with some of its heads switched off
    pca.py         PCA of the patch features: the foreground mask (first component, the border
                   as background) and the foreground's three components as RGB
    learning.py    one step of learning on one image: the loss, its gradients (backward),
                   the softmax Jacobian and a LayerNorm backward of one row, SGD and Adam
    logit_lens.py  the classification head read off every layer's residual stream (and token)
    logit_attribution.py  a logit as additive shares: heads, FFNs, embedding, positions, biases
                   (pre-norm; NotDecomposable for the note's post-norm encoder)
    patching.py    activation patching: B's residual stream at some tokens of one layer in A's pass
    faithfulness.py  deletion / insertion curves of a relevance order (mean-colour baseline)
"""

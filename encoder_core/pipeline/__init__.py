"""The study note's math, one module per step, in the order the encoder runs them:

    patches.py     normalise_pixels, patchify / unpatchify            (step 1a)
    embedding.py   embed: patches · W_E (+ b_E); prefix_tokens         (step 1b)
    positional.py  positional_encoding; patch_positions, position_rows (step 2)
    attention.py   Q, K, V, scores, softmax, heads, concat · W_O:      (step 3, sub-layer 1)
                   multi_head_attention
    norm.py        layer_norm                                          (Add & Norm)
    ffn.py         feed_forward; relu, gelu, gelu_tanh                 (the paper's sub-layer 2)
    encoder.py     encoder_layer, encode                               (the stack)
    head.py        predict: the classification head on the output      (the prediction)

Nothing here reads a checkpoint file or derives a view (tests/test_layering.py).
"""

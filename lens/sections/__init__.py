"""The page sections: parts several pages draw below their header, each a Streamlit function of
the page's context (`pca_section(ctx)`, …), their words in `texts/<lang>/<owner>.toml`.

    pca.py         the PCA of the patch features (The stack, the ViT page)
    relevance.py   a class's relevance beside the attention, with a head
    similarity.py  every patch's cosine with the pointed one (the similarity explorer)
    heads_off.py   heads switched off: the prediction before and after, each head's effect
    logit_lens.py  the logit lens: the top classes at every depth, every patch's token read
    logit_shares.py  each head's and each FFN's share of a class's logit (pre-norm models)
    patching.py    a second image's patches put into this one's stream, layer by layer
    faithfulness.py  the maps' deletion and insertion curves: which map is faithful
    prediction.py  the model's prediction and its top logit term by term (overview, ViT page)
    meaning.py     the attention pages' trained-model button and training-step slider
"""

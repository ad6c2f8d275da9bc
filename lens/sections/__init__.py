"""The page sections: parts several pages draw below their header, each a Streamlit function of
the page's context (`pca_section(ctx)`, …), their words in `texts/<lang>/<owner>.toml`.

    pca.py         the PCA of the patch features (The stack, the ViT page)
    relevance.py   a class's relevance beside the attention, with a head
    similarity.py  every patch's cosine with the pointed one (the similarity explorer)
    heads_off.py   heads switched off: the prediction before and after, each head's effect
    prediction.py  the model's prediction and its top logit term by term (overview, ViT page)
    meaning.py     the attention pages' trained-model button and training-step slider
"""

"""The small encoder trained on generated shapes, which the app ships so that attention has a
meaning one click away:

    dataset.py     the generated images: one of circle, square, triangle, cross, plus
                   distractors, on a varied background (made from a seed)
    classifier.py  its classification head, the shipped weights and training checkpoints
                   (package data), and the localisation measure of its attention
"""

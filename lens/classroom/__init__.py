"""A live class: the teacher asks, every student predicts, the class sees its answers
beside the model's. `store` is the state every server process of a class shares (SQLite by
default, PostgreSQL for several machines); the pages come next."""

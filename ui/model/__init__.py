"""The UI's view models: plain Python that imports no Reflex (tested without a browser).

`room` folds server frames into the classroom's model, `render` projects it into the
classroom's vars; `graph_view` and `graph_layout` turn the graph snapshot into home's
drawing and node details; `replay_*` turn a recorded trace into the replay page.
"""

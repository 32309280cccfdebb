"""The graph as it was at an earlier moment, cut from the folded state (no ledger re-read).

A line belongs to the past of `as_of` when its own moment is at or before it: a node's or
edge's `created_at`, an event's `at` (when the learner answered), a mapping's or
checkpoint's `at`. So between an answer and the extraction that folded it, the probe is
there but its node may not be yet (it then counts as unattributed). An edge keeps the
chats that had asserted it by then; a mapping that later superseded a prerequisite one
gives way to it; a chat's checkpoint is its last one by then.

The result is for reading (deriving a snapshot). It is not a state to merge into: `local`
holds only the past's winning mappings' local ids, and `audit_lines` is 0.
"""

from __future__ import annotations

from datetime import datetime

from backend.core.graph_state import GraphState, add_node, edge_times


def state_as_of(state: GraphState, as_of: datetime) -> GraphState:
    """`state` as it was at `as_of` (`state` itself when nothing in it is later). O(state)."""
    if state.latest is None or state.latest <= as_of:
        return state
    past = GraphState()
    moments: list[datetime] = []
    for line in state.nodes.values():
        if line.created_at <= as_of:
            add_node(past, line)
            moments.append(line.created_at)
    for key, chats in state.edges.items():
        kept = [(c, at) for c, at in zip(chats, edge_times(state, key), strict=True) if at <= as_of]
        if kept:
            past.edges[key] = tuple(c for c, _ in kept)
            past.edge_since[key] = kept[0][1]
            if len(kept) > 1:
                past.edge_later[key] = tuple(at for _, at in kept[1:])
            moments.extend(at for _, at in kept)
    past.events = {ref: e for ref, e in state.events.items() if e.at <= as_of}
    moments.extend(e.at for e in past.events.values())
    for pair, mapping in state.mappings.items():
        earlier = state.superseded.get(pair)
        if mapping.at > as_of:
            if earlier is None or earlier.at > as_of:
                continue
            mapping = earlier
        elif earlier is not None and earlier.at <= as_of:
            past.superseded[pair] = earlier
        past.mappings[pair] = mapping
        past.local.setdefault((mapping.chat_id, mapping.local_id), mapping.node_id)
        moments.append(mapping.at)
    for chat_id, history in state.checkpoint_history.items():
        kept_checkpoints = tuple(c for c in history if c.at <= as_of)
        if kept_checkpoints:
            past.checkpoint_history[chat_id] = kept_checkpoints
            past.checkpoints[chat_id] = kept_checkpoints[-1]
            moments.append(max(c.at for c in kept_checkpoints))
    past.latest = max(moments, default=None)
    return past

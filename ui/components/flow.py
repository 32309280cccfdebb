"""React Flow (`@xyflow/react`) wrapped as Reflex components, in Python only."""

from __future__ import annotations

from typing import Any

import reflex as rx

FLOW_PACKAGE = "@xyflow/react@12.12.1"


def _node_id(event: rx.Var, node: rx.Var) -> tuple[rx.Var[str]]:
    """JS `onNodeClick(event, node)` → only the node's id reaches Python."""
    return (rx.Var(f"{node}.id").to(str),)


def _selected_id(selection: rx.Var) -> tuple[rx.Var[str]]:
    """JS `onSelectionChange({nodes, edges})` → the first selected node's id, or ""."""
    return (rx.Var(f"({selection}.nodes[0]?.id ?? '')").to(str),)


def _entered_node_id(event: rx.Var) -> tuple[rx.Var[str]]:
    """JS `onKeyDown(event)` → the id of the node Enter or Space was pressed on, or "".
    React Flow selects on those keys but ignores them on a node already selected, so
    reopening a closed panel by keyboard needs the key itself."""
    key, node = f"{event}.key", f"{event}.target.closest('.react-flow__node')"
    return (
        rx.Var(f"(({key} === 'Enter' || {key} === ' ') ? ({node}?.dataset.id ?? '') : '')").to(str),
    )


class _Flow(rx.Component):
    library = FLOW_PACKAGE

    def add_imports(self) -> dict[str, Any]:
        return {"": "@xyflow/react/dist/style.css"}


class ReactFlow(_Flow):
    """Uncontrolled graph canvas: drag state stays in the browser; remount via `key`."""

    tag = "ReactFlow"
    default_nodes: rx.Var[list[dict[str, Any]]]
    default_edges: rx.Var[list[dict[str, Any]]]
    fit_view: rx.Var[bool]
    fit_view_options: rx.Var[dict[str, Any]]
    min_zoom: rx.Var[float]
    max_zoom: rx.Var[float]
    nodes_connectable: rx.Var[bool]
    delete_key_code: rx.Var[str | None]
    aria_label_config: rx.Var[dict[str, str]]
    color_mode: rx.Var[str]
    on_node_click: rx.EventHandler[_node_id]
    on_selection_change: rx.EventHandler[_selected_id]
    """Also fires for Enter or Space on a focused node: the keyboard's way to select."""
    on_key_down: rx.EventHandler[_entered_node_id]
    """Enter or Space on a focused node, selected or not (React Flow passes it to its
    wrapper)."""


class Background(_Flow):
    tag = "Background"
    gap: rx.Var[int]


class Controls(_Flow):
    tag = "Controls"
    show_interactive: rx.Var[bool]


class MiniMap(_Flow):
    tag = "MiniMap"
    pannable: rx.Var[bool]
    zoomable: rx.Var[bool]


react_flow = ReactFlow.create
flow_background = Background.create
flow_controls = Controls.create
flow_minimap = MiniMap.create

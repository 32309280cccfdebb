"""The Reflex app: Radix theme (light/dark), 16px body, and its routes: home, the
classroom and the replay page (for developers, not in the learner's navigation).

Pages are added here with `add_page`, once. `@rx.page` would register them again on
every compile of the app, and `reflex run --env prod` compiles twice in one process (the
frontend build, then the server's start), which printed "Page ... is being redefined".
"""

import reflex as rx

from ui.csp import with_csp
from ui.pages.classroom import classroom
from ui.pages.home import home
from ui.pages.replay import replay
from ui.pages.signin import signin, signup
from ui.state.home_state import HomeState
from ui.state.learner_state import LearnerState
from ui.state.replay_state import ReplayState
from ui.state.room_state import RoomState
from ui.state.session_state import SessionState

STYLE = {
    "font_size": "16px",
    ".lh-markdown p": {"margin": "0.25em 0"},
    # Model markdown: tables get cells and scroll sideways on a narrow screen; quotes a rule.
    ".lh-markdown table": {
        "border_collapse": "collapse",
        "margin": "0.5em 0",
        "display": "block",
        "max_width": "100%",
        "overflow_x": "auto",
    },
    ".lh-markdown th": {
        "border": "1px solid var(--gray-6)",
        "padding": "0.3em 0.7em",
        "text_align": "left",
        "background": "var(--gray-3)",
    },
    ".lh-markdown td": {"border": "1px solid var(--gray-6)", "padding": "0.3em 0.7em"},
    ".lh-markdown blockquote": {
        "border_left": "3px solid var(--gray-6)",
        "margin": "0.5em 0",
        "padding_left": "0.8em",
        "color": "var(--gray-11)",
    },
    # The classroom follows a streamed answer (see `classroom`): nothing in the room is a
    # scroll anchor, the box after it is.
    ".lh-room": {"overflow_anchor": "none"},
    ".lh-room *": {"overflow_anchor": "none"},
    ".lh-follow": {"overflow_anchor": "auto"},
    ":focus-visible": {"outline": "2px solid var(--accent-9)", "outline_offset": "2px"},
    # An image from another host, shown as a link to it (`ui.components.safe_markdown`).
    ".lh-foreign-image": {"color": "var(--accent-11)", "text_decoration": "underline"},
}

# The Radix theme is configured in `rxconfig.py` (`App(theme=...)` is deprecated).
# Every page carries the Content-Security-Policy (`ui.csp`).
app = rx.App(style=STYLE, api_transformer=with_csp)
app.add_page(
    home,
    route="/",
    title="Learning Harness",
    on_load=[SessionState.require_sign_in, RoomState.leave, HomeState.load, LearnerState.load],
)
app.add_page(
    classroom,
    route="/chat/[chat_id]",
    title="Classroom · Learning Harness",
    on_load=[SessionState.require_sign_in, RoomState.open_room],
)
app.add_page(
    replay,
    route="/replay/[chat_id]",
    title="Replay · Learning Harness",
    on_load=[SessionState.require_sign_in, ReplayState.load],
)
app.add_page(signin, route="/signin", title="Sign in · Learning Harness")
app.add_page(signup, route="/signup", title="Create an account · Learning Harness")

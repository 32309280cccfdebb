"""Sub-agent jobs: the runner, the three sub-agents, their offline twins, the sanitisers."""

from backend.agent.jobs.base import JobArgs, SubAgent, SubAgentContext
from backend.agent.jobs.demo_builder import create_demo_builder
from backend.agent.jobs.errors import UnsafeArtifact
from backend.agent.jobs.offline import offline_subagents
from backend.agent.jobs.researcher import create_researcher
from backend.agent.jobs.runner import JobRunner, create_job_runner
from backend.agent.jobs.sanitise import check_demo_html, demo_srcdoc, sanitise_svg
from backend.agent.jobs.visual_maker import create_visual_maker

__all__ = [
    "JobArgs",
    "JobRunner",
    "SubAgent",
    "SubAgentContext",
    "UnsafeArtifact",
    "check_demo_html",
    "create_demo_builder",
    "create_job_runner",
    "create_researcher",
    "create_visual_maker",
    "demo_srcdoc",
    "offline_subagents",
    "sanitise_svg",
]

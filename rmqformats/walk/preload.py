"""Imported first by the fork server the walk's worker processes are forked from: it loads the compiled
kernels once there, so that every worker starts with them instead of loading them itself."""

from .kernels import warm_up

warm_up()

"""The Harbor integration's tests. LiteLLM (imported by Harbor) would fetch
its model price list from GitHub when an agent is given a model; tests never
reach the internet, so it reads the copy it ships with."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

"""A bot made of a policy written for the PettingZoo environment (policy.py).

``from_policy`` turns the policy into the ``choose`` function ``run`` plays:
the SDK encodes each observation the referee sends exactly as
``arena.envs.kahuna_v0`` does, and maps the returned index back to an action.
"""

from kahuna_bot import from_policy, run
from policy import policy

if __name__ == "__main__":
    raise SystemExit(run(from_policy(policy), name="python_policy", version="1"))

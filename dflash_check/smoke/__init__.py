"""The smoke run: a real speculative decode with a bundled DFlash drafter (torch, lazily).

Nothing here is imported on the check path; ``dflash_check.smoke.run.run_smoke`` imports
torch and transformers when called, and says what to install when they are missing.
"""

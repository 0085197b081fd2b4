"""Generated from proto/ by scripts/gen-proto. Do not edit."""

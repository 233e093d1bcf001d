"""The MiniTorch course tool: write, prove and grade the weekly student starters."""

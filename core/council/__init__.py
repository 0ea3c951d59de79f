"""Council and skills: expert profiles, the Delphi round table, 1:1 expert threads, delegation."""

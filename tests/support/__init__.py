"""The tests' helpers: fixtures' machinery, strategies, fakes and the real tier's process handling
(tests/ is on sys.path, so a test imports ``from support.simulation import ...``)."""

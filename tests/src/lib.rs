//! kernaut-e2e: end-to-end tests of the real binaries and the tidy test live in `tests/`.

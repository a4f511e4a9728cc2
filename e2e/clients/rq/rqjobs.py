"""Job functions python-rq imports by name (e2e/clients_test.go)."""


def add(a, b):
    return a + b


def fail():
    raise ValueError("intended failure")

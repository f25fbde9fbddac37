"""This process's own threads, named for the operating system.

Python names a thread for itself only: `top -H`, `ps -L`, `/proc` and profilers see every thread
of a web process as "daphne". Each thread the process keeps (the request slots, the database
lanes) writes its name to its `/proc` entry as it starts, so the CPU each one uses can be read
from outside (`bench/load.py` splits the web process's CPU this way). Linux allows 15 characters;
elsewhere this does nothing.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

OS_NAME_MAX = 15  # the kernel's limit (TASK_COMM_LEN, less its terminating NUL)


def os_name(name: str) -> None:
    """Give the calling thread `name` in the operating system (cut to 15 characters); never raises:
    a thread that cannot be named works as well."""
    try:
        with open(f"/proc/self/task/{threading.get_native_id()}/comm", "w", encoding="ascii",
                  errors="replace") as comm:
            comm.write(name[:OS_NAME_MAX])
    except OSError:
        pass


def named(prefix: str) -> Callable[[], None]:
    """A ThreadPoolExecutor `initializer` naming each of its threads `prefix` and the number the
    executor gave it (`prefix-0`, `prefix-1`, ...)."""
    def initializer() -> None:
        number = threading.current_thread().name.rpartition("_")[2]
        os_name(f"{prefix}-{number}" if number.isdigit() else prefix)
    return initializer

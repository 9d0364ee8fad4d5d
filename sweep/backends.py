"""Where configurations run: a local process pool (each configuration in its own forked child, so
a timeout can kill it) or a Ray cluster (one task per configuration, cancelled on timeout). Both
yield result rows as configurations finish, in completion order."""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from ipu.sweep.worker import failed_row, run_config


def _timeout_message(timeout: float) -> str:
    return f"timeout after {timeout:g} s"


def _child(config: dict[str, Any], conn: Any) -> None:
    conn.send(run_config(config))
    conn.close()


def run_isolated(config: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    """Run one configuration in a forked child of this (warm, single-threaded) pool worker: a crash
    or a timeout kills only the child and becomes a failed row."""
    ctx = mp.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(config, send), daemon=True)
    t0 = time.perf_counter()
    proc.start()
    send.close()
    try:
        if receive.poll(timeout):
            return receive.recv()
        proc.kill()
        return failed_row(config, _timeout_message(timeout or 0), time.perf_counter() - t0)
    except EOFError:  # the child died without sending its row
        proc.join()
        return failed_row(config, f"worker exited with code {proc.exitcode}", time.perf_counter() - t0)
    finally:
        proc.join()
        receive.close()


def _warm() -> None:
    """Pool initializer: import the compiler once, so every forked configuration starts warm."""
    import ipu.api  # noqa: F401


def run_local(configs: list[dict[str, Any]], jobs: int, timeout: float | None) -> Iterator[dict[str, Any]]:
    """Run `configs` on `jobs` pool workers (spawned, so the driver's threads do not leak into them)."""
    if not configs:
        return
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn"), initializer=_warm)
    try:
        pending = {pool.submit(run_isolated, c, timeout): c for c in configs}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                config = pending.pop(fut)
                try:
                    yield fut.result()
                except BrokenProcessPool as e:
                    yield failed_row(config, f"worker pool broke: {e}")
                except Exception as e:  # noqa: BLE001 - a pool-level failure still belongs to one row
                    yield failed_row(config, f"{type(e).__name__}: {e}")
    finally:  # an interrupted sweep drops what has not started; running children end within their timeout
        pool.shutdown(wait=True, cancel_futures=True)


def _check_reachable(address: str, seconds: float = 5.0) -> None:
    """Fail fast on an address nothing listens at (Ray itself retries for minutes)."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ConnectionError(f"Ray address must be auto or HOST:PORT (or ray://HOST:PORT), got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=seconds).close()
    except OSError as e:
        raise ConnectionError(f"cannot connect to Ray at {address}: {e}") from None


def connect_ray(address: str, num_cpus: int | None = None) -> bool:
    """Join the Ray cluster at `address` ("auto": a running local cluster, else start one);
    True when this call started Ray (the caller then shuts it down)."""
    import ray

    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    if address != "auto":
        _check_reachable(address)
    try:
        if address == "auto":
            try:
                ray.init(address="auto", **kwargs)
            except ConnectionError:
                ray.init(num_cpus=num_cpus, **kwargs)
        else:
            ray.init(address=address, **kwargs)
    except Exception as e:  # noqa: BLE001 - Ray raises several types for an unreachable cluster
        raise ConnectionError(f"cannot connect to Ray at {address}: {e}") from None
    return True


def run_ray(configs: list[dict[str, Any]], jobs: int | None, timeout: float | None) -> Iterator[dict[str, Any]]:
    """Run `configs` as Ray tasks, at most `jobs` (default: the cluster's CPUs) in flight, so a
    task's clock starts when it is submitted; a task past its timeout is force-cancelled."""
    import ray

    task = ray.remote(num_cpus=1, max_retries=0)(run_config)
    limit = jobs or max(1, int(ray.cluster_resources().get("CPU", 1)))
    queue = list(configs)
    running: dict[Any, tuple[dict[str, Any], float]] = {}
    while queue or running:
        while queue and len(running) < limit:
            c = queue.pop(0)
            running[task.remote(c)] = (c, time.monotonic())
        wait_for = None
        if timeout is not None:
            wait_for = max(0.0, min(t0 + timeout for _, t0 in running.values()) - time.monotonic())
        done, _ = ray.wait(list(running), num_returns=1, timeout=wait_for)
        for ref in done:
            config, t0 = running.pop(ref)
            try:
                yield ray.get(ref)
            except Exception as e:  # noqa: BLE001 - a lost worker or task error fails this configuration only
                yield failed_row(config, f"ray task failed: {type(e).__name__}: {e}", time.monotonic() - t0)
        if timeout is not None:
            now = time.monotonic()
            for ref, (config, t0) in list(running.items()):
                if now - t0 >= timeout:
                    ray.cancel(ref, force=True)
                    del running[ref]
                    yield failed_row(config, _timeout_message(timeout), now - t0)


__all__ = ["connect_ray", "run_isolated", "run_local", "run_ray"]

"""``questhall play``: a terminal client on the SDK and the chat kit.

Create a game (other seats filled by bots unless ``--open``) or join one, then type commands in
the title's chat grammar. Feed events and your view are printed as they arrive; when it is your
move the prompt ``your move> `` appears, after your view and the names and texts of the cards in
it (from the title's content, ``GET /v1/titles/{title}``). Orion Duel's board is drawn again
after every move. Words: ``help``, ``moves``, ``hint`` (the title's best bot, e.g. Orion Duel's
``greedy``), ``view`` or ``board``, ``cards`` (every card in your view), ``card ID``, ``quit``.
Exit status 0 when the game ends, 1 after ``quit`` or at the end of input (Ctrl-D, stdin from
/dev/null), 130 after Ctrl-C; the receipts are kept in each case.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from services.frontends.cards import glossary, named_in
from services.frontends.chat import (
    Action,
    ChatError,
    format_command,
    help_text,
    hint,
    moves_text,
    parse,
    render_event,
    render_view,
)
from services.kernel import get_title, titles
from services.sdk import BotStats, Gateway, GatewayError, SeatClient, play_seat

PROMPT = "your move> "


READY_WAIT = 10.0
"""Seconds a typed line waits for the terminal's first current view before it is answered anyway."""


class Terminal:
    """One human seat in a terminal: prints what arrives, reads lines, submits commands."""

    def __init__(self, client: SeatClient, title: str, out: Callable[[str], None], read_line: Callable[[], Awaitable[str]],
                 rng: random.Random, cards: dict[str, str] | None = None) -> None:
        self.client = client
        self.title = title
        self.t = get_title(title)
        self.out = out
        self.read_line = read_line
        self.rng = rng
        self.cards = cards or {}
        """Content id -> "Name: text" (services/frontends/cards.py)."""
        self.env: dict | None = None
        self.names: list[str] = []
        self.drawn = -1
        """The version whose Orion Duel board was drawn last."""
        self.shown = 0
        """The highest version whose feed line was printed."""
        self.acks: list[int] = []
        """Versions of accepted commands whose ``ok`` waits for their feed lines (lines in version order)."""
        self.done = anyio.Event()
        self.ready = anyio.Event()
        """Set once a view at (at least) the version this terminal's own commands reached has come:
        lines typed (or piped) before it are answered after it, not on no view or a stale one."""

    def stop(self, code: int) -> None:
        """Stop playing with exit status ``code`` (1: ``quit`` or end of input; 130: Ctrl-C)."""
        self.code = code
        self.done.set()

    async def run(self) -> int:
        """Play until the game ends (0), the player quits or input ends (1), or Ctrl-C (130)."""
        self.out(f"You are {self.client.name} at seat {self.client.seat} of {self.title} game {self.client.game_id}. Type help.")
        self.code = 0
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._listen)
            tg.start_soon(self._read)
            await self.done.wait()
            tg.cancel_scope.cancel()
        return self.code

    async def _listen(self) -> None:
        async with self.client.subscribe(0) as sub:
            while True:
                m = await sub.recv()
                if m["type"] == "feed":
                    self._feed(m["entry"])
                elif m["type"] == "view":
                    self.env = m["view"]
                    self.names = [s.get("name") or f"seat {s['seat']}" for s in self.env["seats"]]
                    if int(self.env.get("version") or 0) >= self.client.version:
                        self.ready.set()
                    self._redraw()
                    if self.env["status"] in ("finished", "abandoned"):
                        self._flush_acks(every=True)
                        self.out(render_view(self.title, self.env, self.client.seat))
                        self.out("GAME OVER")
                        self.done.set()
                        return
                    if self.client.seat in self.env["to_move"]:
                        self.out(render_view(self.title, self.env, self.client.seat))
                        self._legend(hand_only=True)
                        self.out(PROMPT)

    def _feed(self, entry: dict) -> None:
        """One feed line, then the ``ok`` of each accepted command it completes."""
        self.out(render_event(self.title, entry, self.names))
        self.shown = max(self.shown, int(entry["version"]))
        self._flush_acks()

    def _ack(self, version: int) -> None:
        """``ok (vN)`` for an accepted command whose last event is ``version``: at once if the feed
        has shown it, else after its feed line (the outcome often arrives before the feed)."""
        self.acks.append(version)
        self._flush_acks()

    def _flush_acks(self, *, every: bool = False) -> None:
        self.acks.sort()
        while self.acks and (every or self.acks[0] <= self.shown):
            self.out(f"ok (v{self.acks.pop(0)})")

    def _redraw(self) -> None:
        """Orion Duel: the board again after every move (each new version of the view)."""
        if self.title != "orion_duel" or not self.env or not self.env.get("view"):
            return
        version = int(self.env.get("version", 0))
        if version != self.drawn:
            self.drawn = version
            self.out(self._board())

    def _board(self) -> str:
        from services.frontends.chat.orion_duel import render_board

        return render_board(self.env["view"]) if self.env and self.env.get("view") else "(no board yet)"

    def _legend(self, *, hand_only: bool = False, only: str | None = None) -> None:
        """The names and texts of the cards in the view (``hand_only``: the hand's, else every
        card's; ``only``: one card id)."""
        if only is not None:
            self.out(f"{only}: {self.cards[only]}" if only in self.cards else f"? No card {only[:40]!r} in {self.t.display_name}.")
            return
        view = (self.env or {}).get("view") or {}
        where = view.get("hand", []) if hand_only and isinstance(view, dict) and "hand" in view else view
        for cid in named_in(where, self.cards, limit=24 if not hand_only else 16):
            self.out(f"  {cid}: {self.cards[cid]}")

    async def _read(self) -> None:
        while True:
            line = await self.read_line()
            with anyio.move_on_after(READY_WAIT):  # answered on the current view (none yet: at most this long)
                await self.ready.wait()
            if line == "" or line.strip() in ("quit", "exit"):  # "": end of input (Ctrl-D, /dev/null), as quit
                why = "at the end of input" if line == "" else "as asked"
                self.out(f"Stopped {why} (exit status 1); game {self.client.game_id} goes on without this terminal.")
                self.stop(1)
                return
            words = line.strip().split()
            if words and words[0].lower() in ("card", "cards") and len(words) <= 2:
                self._legend(only=words[1].lower() if len(words) == 2 else None)
                self._reprompt()
            elif words:
                await self._line(line)

    async def _line(self, line: str) -> None:
        try:
            cmd = parse(self.title, line, self.env, self.client.seat)
        except ChatError as exc:
            self.out(f"? {exc}")
            self._reprompt()
            return
        if isinstance(cmd, Action):
            self._action(cmd.name, line)
            self._reprompt()
            return
        try:
            out = await self.client.submit(cmd)
            self._ack(out.version)
        except GatewayError as exc:
            self.out(f"refused: {exc.message} [{exc.code}]")
            self._reprompt()

    def _reprompt(self) -> None:
        """Show the prompt again while the game still waits for this seat."""
        if self.env and self.env.get("status") == "active" and self.client.seat in self.env.get("to_move", []):
            self.out(PROMPT)

    def _action(self, name: str, line: str) -> None:
        if name == "help":
            self.out(help_text(self.title))
        elif name == "view":  # also "board"
            if self.env:
                self.out(render_view(self.title, self.env, self.client.seat))
                if self.title == "orion_duel":
                    self.out(self._board())
        elif name == "moves":
            self.out(moves_text(self.title, self.env, self.client.seat))
        elif name == "hint":
            if not self.env or self.client.seat not in self.env.get("to_move", []):
                self.out("hint: (not your move)")
                return
            cmd = hint(self.title, self.env, self.client.seat, self.rng)
            self.out(f"hint: {format_command(self.title, cmd)}" if cmd else "hint: (nothing to do)")
        elif name == "start":
            self.out("The game starts when every seat is taken.")


async def play(url: str, *, title: str | None, seats: int | None, name: str, game_id: str | None, seat: int | None,
               open_seats: bool, options: dict, seed: int, out: Callable[[str], None] = print,
               read_line: Callable[[], Awaitable[str]] | None = None) -> int:
    """Create or join a game on the gateway at ``url`` and play it in the terminal. Returns the exit code."""
    rng = random.Random(seed)
    async with Gateway(url) as gw:
        try:
            if game_id is None:
                if title is None:
                    out("Name a --title to create a game: " + ", ".join(t.name for t in await gw.titles()))
                    return 2
                t = get_title(title)
                game = await gw.create(title, seats or t.min_seats, options)
                game_id = game.game_id
                me = await gw.join(game_id, name, seat=0)
                out(f"Created {title} game {game_id} with {game.seats} seats.")
            else:
                me = await gw.join(game_id, name, seat=seat)
                title = me.title
                t = get_title(title)
        except GatewayError as exc:
            out(f"refused: {exc.message} [{exc.code}]")
            return 2
        except KeyError:  # the gateway serves a title this terminal has no module of (its grammar, its views)
            out(f"Game {game_id} is of title {title!r}, which this questhall does not know; known: "
                + ", ".join(sorted(titles())) + ".")
            return 2
        cards = await _glossary(gw, title)
        async with anyio.create_task_group() as tg:
            info = await gw.game(game_id)
            botted = False
            if not open_seats and info.taken < info.seats and info.status == "lobby":
                bots = sorted(t.bots)
                for i, n in enumerate(info.names):
                    if n is None and i != me.seat:  # a server bot: the bot service plays it
                        bname = bots[i % len(bots)]
                        await gw.join(game_id, seat=i, bot=bname)
                        out(f"A {bname} bot took seat {i}.")
                        botted = True
            # Bots took every open seat: the lobby may not show them yet, but nobody is awaited.
            await _start_when_full(gw, me, out, quiet=botted)
            term = Terminal(me, title, out, read_line or stdin_line, rng, cards)
            await tg.start(_stop_on_interrupt, term)
            code = await term.run()
            tg.cancel_scope.cancel()
        await _keep_receipts(gw, game_id, me.seat, out)
        return code


async def _stop_on_interrupt(term: Terminal, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
    """Ctrl-C (SIGINT) while playing stops ``term`` with exit status 130, so the receipts are kept
    as after ``quit`` (it was a KeyboardInterrupt that lost them). Outside the main thread (no
    signal handlers there) Ctrl-C stays Python's KeyboardInterrupt."""
    import signal

    try:
        receiver = anyio.open_signal_receiver(signal.SIGINT)
        signals = receiver.__enter__()
    except (ValueError, RuntimeError, NotImplementedError):
        task_status.started()
        return
    try:
        task_status.started()
        async for _ in signals:
            term.stop(130)
            return
    finally:
        receiver.__exit__(None, None, None)


async def _keep_receipts(gw: Gateway, game_id: str, seat: int, out: Callable[[str], None]) -> None:
    """Write the receipts this terminal got to ``$QUESTHALL_DATA/receipts/<game>.seat<N>.json``
    (docs/fairness.md): one file per seat, so two terminals of one game in one folder (``--open``
    and ``--join``) each keep their own (one file per game: the last to end overwrote the other's)."""
    import os
    from pathlib import Path

    path = Path(os.environ.get("QUESTHALL_DATA", ".questhall")) / "receipts" / f"{game_id}.seat{seat}.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        await gw.save_receipts(game_id, path)
    except (OSError, GatewayError):
        return
    out(f"Receipts kept in {path} (questhall audit {game_id} --receipts {path}, or --file BUNDLE).")


async def stdin_line() -> str:
    """One line of standard input without blocking the event loop ("" at end of input)."""
    try:
        await anyio.wait_readable(sys.stdin.fileno())
    except (OSError, ValueError, NotImplementedError):  # not pollable (a regular file): a thread
        return await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
    return sys.stdin.readline()


async def _bot(c: SeatClient, bot: Any, view_type: type, rng: random.Random) -> None:
    await play_seat(c, bot, view_type, rng, BotStats(), timeout=3600)


async def _glossary(gw: Gateway, title: str) -> dict[str, str]:
    """The card names and texts of ``title`` from the gateway's title content ({} if unavailable)."""
    try:
        detail = await gw.request("GET", f"/titles/{title}")
    except GatewayError:
        return {}
    return glossary(title, detail.get("content") or {}) if isinstance(detail, dict) else {}


async def _start_when_full(gw: Gateway, me: SeatClient, out: Callable[[str], None], *, quiet: bool = False) -> None:
    """Wait until every seat is taken, then start (if nobody else did). ``quiet``: every open
    seat was just given to a bot (the lobby read model catches up; no player is awaited)."""
    said = quiet
    while True:
        g = await gw.game(me.game_id)
        if g.status != "lobby":
            return
        if g.taken == g.seats:
            try:
                await me.start()
            except GatewayError as exc:
                if exc.code not in ("not_in_lobby", "seats_open"):
                    raise
            return
        if not said:
            out(f"Waiting for players: questhall play --join {me.game_id}")
            said = True
        await anyio.sleep(0.2)

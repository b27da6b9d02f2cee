"""Every error code a client of the gateway can receive (enumerated in the OpenAPI document).

:data:`GATEWAY_CODES` are the gateway's own (request, token, limit and transport errors; HTTP
status beside each); :data:`RULE_CODES` are the rule rejections of the lifecycle
(services/kernel/game.py, secret.py, undo.py), the worker (``lost``, ``handling_failed``) and
every title's rejection table (docs/games/*.md). A rule rejection is 422 when its code is in
:data:`services.gateway.service.UNPROCESSABLE`, else 409.

A new code must be added here: tests/gateway/test_client_api.py scans the sources and the
titles' rejection tables and fails naming any code missing from :data:`ERROR_CODES`.
"""

from __future__ import annotations

GATEWAY_CODES: dict[str, int] = {
    "invalid_request": 400, "bad_game_id": 400, "bad_command_id": 400, "bad_status": 400, "bad_range": 400,
    "bad_request": 400,
    "token_missing": 401, "token_invalid": 401, "token_expired": 401, "token_revoked": 401,
    "admin_token_invalid": 401, "unauthorized": 401,
    "token_wrong_game": 403, "token_wrong_seat": 403, "not_owner": 403, "admin_disabled": 403, "forbidden": 403,
    "game_not_found": 404, "unknown_title": 404, "view_not_ready": 404, "no_result": 404, "not_found": 404,
    "method_not_allowed": 405,
    "game_not_over": 409, "no_open_seat": 409, "command_id_reused": 409,
    "body_too_large": 413, "unsupported_media_type": 415,
    "rate_limited": 429,
    "internal_error": 500, "unavailable": 503, "overloaded": 503, "outcome_timeout": 504, "not_projected": 504,
    # WebSocket-only (WsError / WsOutcome; docs/gateway.md "WebSocket protocol")
    "bad_message": 400, "read_only": 403,
}
"""The gateway's own codes with their HTTP status (socket-only codes: the status they stand for)."""

RULE_CODES: frozenset[str] = frozenset("""
already_agreed bad_public_key bad_reason bad_signature not_operator seat_key_required signature_required
action_done_this_turn already_answered already_kept already_revealed already_rolled bad_amount
bad_bonus_card bad_bottom_order bad_choice bad_client_seed bad_command bad_mentor_target bad_name
bad_options bad_reading_size bad_recover_target bad_rotation bad_seat bad_seats bad_split bad_target
bid_out_of_range black_hole_near_galaxy black_hole_too_close cannot_attack_with cannot_develop_cups
cannot_take_hit card_already_played card_not_acquired card_not_in_hand cell_taken combat_under_way
companions_off coop_only deck_empty dice_not_chosen duplicate_card empty_hand environments_off
galaxy_too_close game_archived game_exists game_not_started game_over gm_only god_cannot_be_bought handling_failed
hand_full item_limit look_pending lost mentor_choice_pending must_follow_preferred_class
no_allies_here no_choice_open no_fate_card no_luck_left no_mentor_choice no_such_game no_such_item
no_such_player no_such_quest no_such_slot no_undo_request not_a_court_card not_an_ally
not_bidding_phase not_choosing not_combat_phase not_enough_xp not_in_inventory not_in_lobby
not_looked_at not_next_in_sequence not_now not_playing_phase not_seated not_the_bonus_card
not_undoable not_your_command not_your_turn nothing_to_forget nothing_to_undo off_board
orb_not_needed orb_not_usable out_of_time own_undo_request payment_not_needed players_only
recover_too_weak requirement_not_met seat_open seat_out_of_range seat_taken seats_open session_full
setup_dead_end setup_not_done shop_order_not_chosen stale_version system_command tile_already_used
token_cover_without_chain too_many_cards undo_after_chance undo_after_secret undo_off undo_pending
unknown_bot unknown_command unknown_tile wrong_choice wrong_phase wrong_title
bad_dice bad_die bad_payer companion_already dice_already_chosen environment_already_swapped
help_limit_reached no_active_quest no_companion_left no_environment_left no_trade_spot
not_a_response_item not_enough_money not_offered not_rolled_yet quest_in_progress
shop_order_chosen slot_empty slot_is_trade trade_used hero_not_offered not_in_reserve unknown_card busy chance_unhonoured
ability_used already_accepted already_attacked already_passed automatic_ability bad_conversion
bad_distribution bad_put_in breakage duel_already_started empty_deck equipment_used must_convert name_a_card
no_damage_card no_damage_to_reduce no_proposal no_target not_distributing not_equipped not_in_pool not_over_limit
not_responding not_sharing nothing_to_block nothing_to_pass own_card powerlessness sacred_place secret_choice_open
window_open not_giving not_a_helper bad_count choice_unchanged too_many_changes
""".split())
"""Rule rejection codes (409, or 422 for the malformed-command ones)."""

ERROR_CODES: tuple[str, ...] = tuple(sorted(set(GATEWAY_CODES) | RULE_CODES))
"""Every code an :class:`~schemas.gateway.ErrorBody`, ``WsOutcome`` or ``WsError`` can carry, sorted."""

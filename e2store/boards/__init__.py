"""The boards database (docs/store-format.md, *Boards files*), a stage beside the corolle
store: what the searches write and the field hands e2store.  The format, schema and version
declared once (`schema`); boards files and scores (`table`); boards datasets, a part per
restart (`dataset`: written by `parts`, read by `read`, merged by `compact`); a board's
canonical key (`keys`); every way a user hands a board (`sources`); Blackwood-style saved
boards (`saved`); solutions files (`solutions`); and `open_boards`, one handle over a boards
file or a dataset (`handle`)."""

from typing import TYPE_CHECKING

from e2store.lazy import lazy_exports

if TYPE_CHECKING:  # the real names for type checkers; at run time each is imported on first use
    from e2store.boards.dataset import BoardsSink as BoardsSink
    from e2store.boards.dataset import DatasetBoards as DatasetBoards
    from e2store.boards.dataset import boards_sink as boards_sink
    from e2store.boards.dataset import compact_boards_dataset as compact_boards_dataset
    from e2store.boards.dataset import dataset_parts as dataset_parts
    from e2store.boards.dataset import is_dataset_target as is_dataset_target
    from e2store.boards.dataset import read_boards_dataset as read_boards_dataset
    from e2store.boards.dataset import write_part as write_part
    from e2store.boards.handle import BoardsHandle as BoardsHandle
    from e2store.boards.handle import open_boards as open_boards
    from e2store.boards.keys import board_key as board_key
    from e2store.boards.keys import quarter_turn as quarter_turn
    from e2store.boards.restarts import campaign_rows as campaign_rows
    from e2store.boards.restarts import final_url as final_url
    from e2store.boards.restarts import restart_arrays as restart_arrays
    from e2store.boards.restarts import restart_columns as restart_columns
    from e2store.boards.saved import SavedBoardError as SavedBoardError
    from e2store.boards.saved import read_saved_board as read_saved_board
    from e2store.boards.saved import saved_board_text as saved_board_text
    from e2store.boards.saved import write_saved_boards as write_saved_boards
    from e2store.boards.schema import BOARD_STATS as BOARD_STATS
    from e2store.boards.schema import BOARDS_FORMAT as BOARDS_FORMAT
    from e2store.boards.schema import BOARDS_VERSION as BOARDS_VERSION
    from e2store.boards.schema import boards_schema as boards_schema
    from e2store.boards.schema import column_kinds as column_kinds
    from e2store.boards.solutions import check_solution as check_solution
    from e2store.boards.solutions import check_solutions as check_solutions
    from e2store.boards.solutions import read_solutions as read_solutions
    from e2store.boards.solutions import write_solutions as write_solutions
    from e2store.boards.sources import chosen_any_board as chosen_any_board
    from e2store.boards.sources import read_any_board as read_any_board
    from e2store.boards.sources import read_any_boards as read_any_boards
    from e2store.boards.sources import score_sources as score_sources
    from e2store.boards.sources import sourced_boards as sourced_boards
    from e2store.boards.table import Boards as Boards
    from e2store.boards.table import Score as Score
    from e2store.boards.table import append_boards as append_boards
    from e2store.boards.table import board_cells as board_cells
    from e2store.boards.table import inner_joins as inner_joins
    from e2store.boards.table import keep_boards as keep_boards
    from e2store.boards.table import read_boards as read_boards
    from e2store.boards.table import recount as recount
    from e2store.boards.table import score as score
    from e2store.boards.table import write_boards as write_boards

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "schema": ("BOARDS_FORMAT", "BOARDS_VERSION", "BOARD_STATS", "boards_schema", "column_kinds"),
    "table": ("Boards", "Score", "read_boards", "write_boards", "append_boards", "score",
              "board_cells", "inner_joins", "recount", "keep_boards"),
    "keys": ("board_key", "quarter_turn"),
    "dataset": ("DatasetBoards", "BoardsSink", "boards_sink", "read_boards_dataset", "write_part",
                "dataset_parts", "compact_boards_dataset", "is_dataset_target"),
    "handle": ("open_boards", "BoardsHandle"),
    "restarts": ("campaign_rows", "final_url", "restart_arrays", "restart_columns"),
    "sources": ("sourced_boards", "score_sources", "read_any_board",
                "read_any_boards", "chosen_any_board"),
    "saved": ("saved_board_text", "write_saved_boards", "read_saved_board", "SavedBoardError"),
    "solutions": ("check_solution", "check_solutions", "read_solutions", "write_solutions"),
})

//! The command line: every subcommand and flag, with its help text.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "chomp",
    version,
    arg_required_else_help = true,
    about = "Solve the game of Chomp: losing positions, Grundy values and perfect-play tables",
    long_about = "Solve the game of Chomp level by level (a level is a tile count).\n\n\
        Positions are written as row lengths, top row first: \"5 3 3 1 1\" or \"5,3,3,1,1\".\n\
        Cells are 0-based (row, col); (0,0) is the poisoned tile. A position is a loss when\n\
        the player to move loses with perfect play.\n\n\
        Typical use:\n  chomp run\n  chomp query \"3 2 1\" --tables out/default --json\n  \
        chomp verify --tables out/default\n  chomp solve --rows 8 --cols 15 --grundy --out out/box-8x15"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Compute every level of a universe into a table directory (resumes an interrupted run).
    Solve {
        /// Largest tile count (levels 1 to N).
        #[arg(long, value_name = "N")]
        max_tiles: Option<u32>,
        /// Only positions with at most R rows (with --cols: a box).
        #[arg(long, value_name = "R")]
        rows: Option<u32>,
        /// Only positions with at most C columns.
        #[arg(long, value_name = "C")]
        cols: Option<u32>,
        /// Also compute Grundy values for levels 1 to M (M <= N).
        #[arg(long, value_name = "M")]
        grundy_max_tiles: Option<u32>,
        /// Grundy values for every level of the universe.
        #[arg(long, conflicts_with = "grundy_max_tiles")]
        grundy: bool,
        /// Split each level into shards of at most N positions (by default a level
        /// is split, into shards of up to 2^32, only when it is larger).
        #[arg(long, value_name = "N")]
        shard_positions: Option<u64>,
        /// The table format to write: 3 (block-addressable, the default), or 2 or 1
        /// for readers that know no other (FORMAT.md).
        #[arg(long, value_name = "V", default_value_t = 3)]
        table_format: u16,
        /// Also count every win's winning moves: each level's summary gives the
        /// wins with exactly one winning move and those with several (OEIS
        /// A112472 and A112473). Costs a second mark bit per pending position.
        /// On the levels with Grundy values, also the full histogram (positions
        /// by their number of winning moves, winning_moves.csv).
        #[arg(long)]
        count_moves: bool,
        /// The engine. `box`: one bit per position, level by level, writing the
        /// level tables every reader answers from. `few-row`: a box with at most 8 rows
        /// (or 8 columns) and up to 65,535 on the other side, one entry per prefix of
        /// all rows but the last; writes its prefix table (fewrow.table) and
        /// levels.csv, resumes from its checkpoint, and --report-json gives the same levels.
        /// Without it: the few-row engine for a box (losses only) that the box engine
        /// cannot take (a side over 255) or that the dry runs price at under half the box
        /// engine's time when that is half a minute or more; otherwise the box engine.
        /// --dry-run says which and why.
        #[arg(long, value_enum)]
        engine: Option<Engine>,
        /// Output table directory.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        #[command(flatten)]
        run: RunFlags,
    },
    /// Run a job file (TOML, see jobs/): the same engine as `solve`.
    Run {
        /// The job file, e.g. jobs/frontier.toml. Its relative `out` is relative to the file's folder.
        /// Without one: the default job (jobs/default.toml, built into the binary), into out/default
        /// under the current folder.
        job: Option<PathBuf>,
        /// Override the job's output directory.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        #[command(flatten)]
        run: RunFlags,
    },
    /// Answer for one position: outcome, Grundy value and winning moves.
    Query {
        /// Row lengths, top row first: "3 2 1" or "3,2,1".
        #[arg(allow_hyphen_values = true)]
        position: String,
        /// The table directory to read, e.g. out/default (written by `chomp run`, the default job).
        #[arg(long, value_name = "DIR")]
        tables: PathBuf,
        /// Print JSON: position, tiles, outcome, grundy, grundy_normal, winning_moves, moves.
        #[arg(long)]
        json: bool,
        /// Answer only if the directory is the published one: its manifest.json must equal
        /// this published manifest byte for byte (e.g. results/frontier-140-manifest.json),
        /// every byte read being checked against it; a copy damaged in any way is refused whole.
        #[arg(long, value_name = "MANIFEST")]
        against: Option<PathBuf>,
    },
    /// Rewrite a table directory (format 1, 2 or 3) in format 3, block-addressable tables:
    /// every source file is checked on the way, the output equals what a format-3 run of
    /// the same job writes, and a stopped conversion resumes when run again.
    Convert {
        /// The table directory to read.
        #[arg(long, value_name = "DIR")]
        tables: PathBuf,
        /// The new table directory (new, empty, or a stopped conversion of the same tables).
        #[arg(long, value_name = "DIR2")]
        out: PathBuf,
        /// Print nothing but errors.
        #[arg(long)]
        quiet: bool,
    },
    /// Write a static web site that plays Chomp and answers queries from table directories
    /// with no server: the game page, the JavaScript reader (HTTP range requests, every
    /// byte checked against the manifest) and copies of the tables (each file checked
    /// against its manifest on the way), or links to a mirror that serves them
    #[command(long_about = "Write a static web site that plays Chomp and answers queries from table directories, with no server.\n\n\
The site holds the game page (as `chomp serve` shows it; very hard plays perfectly inside the tables, learning \
mode marks the winning moves; the other levels need the server), the JavaScript reader (js/chomp-tables.js) \
and site.json, the list of table directories. Without --mirror it copies every file each manifest lists into \
SITE/tables/NAME/ (NAME: the directory's name), checking each against its manifest's SHA-256 on the way; with \
--mirror URL the page reads URL/NAME/ instead (a mirror of the published directories, e.g. what `chomp fetch` reads). \
Either way site.json pins each manifest's SHA-256, and the reader checks every byte it reads against it.\n\n\
Serve SITE from any static host that answers HTTP range requests (nginx, GitHub Pages, an object store). \
The site is written to SITE.partial and renamed at the end: SITE is whole or absent.\n\n\
Example: chomp site --tables results/box-8x15 --out site, then serve site/ (docs/site.md has an nginx configuration).")]
    Site {
        /// A table directory to publish (repeat for several; names must differ), e.g. --tables results/box-8x15.
        #[arg(long, value_name = "DIR", required = true)]
        tables: Vec<PathBuf>,
        /// The site's directory (new; with --force, replaced).
        #[arg(long, value_name = "SITE")]
        out: PathBuf,
        /// Read the tables from this mirror (URL/NAME/manifest.json, ...) instead of copying them into the site.
        #[arg(long, value_name = "URL")]
        mirror: Option<String>,
        /// Pack each table directory's tables into one file (tables/NAME/tables.pack, its index in site.json):
        /// the page then asks a question's reads in a few requests of several ranges each. Needs a host that
        /// answers multi-range requests (nginx and Apache do; others get one range a request).
        #[arg(long, conflicts_with = "mirror")]
        pack: bool,
        /// Replace SITE if it exists.
        #[arg(long)]
        force: bool,
        /// Print nothing but errors.
        #[arg(long)]
        quiet: bool,
    },
    /// Download a published table directory from a mirror: every file its manifest lists,
    /// several at once, each checked against the manifest's SHA-256 before it gets its
    /// name (partial files resume with HTTP Range requests: stop it at any time and run it
    /// again); the manifest is written last.
    Fetch {
        /// The published manifest, e.g. results/frontier-140-manifest.json.
        #[arg(long, value_name = "FILE")]
        manifest: PathBuf,
        /// The mirror: the address of the table directory (http://, https:// or file://).
        #[arg(long, value_name = "URL")]
        from: String,
        /// Where to put the directory (new, empty, or an interrupted fetch of the same manifest).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Files downloaded at once.
        #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
        jobs: u32,
        /// Seconds the mirror may send nothing before a transfer fails (it is then tried again).
        #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
        idle_timeout: u64,
        /// Further tries of a file whose transfer fails on the way (a dropped connection, a 5xx,
        /// the idle timeout), after 1, 2, 4, ... s, each resuming where the last stopped. A mirror
        /// that has not answered once stops the fetch after 3 tries.
        #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(0..=20))]
        retries: u32,
        /// Print nothing but errors and the final line.
        #[arg(long)]
        quiet: bool,
    },
    /// Value an iChomp position (four quadrants, normal play) and find a winning move.
    #[command(override_usage = "chomp ichomp <Q1> <Q2> <Q3> <Q4> --tables <DIR> [--json]")]
    Ichomp {
        /// Exactly four quadrant positions, e.g. "3 2" "-" "4" "2 2"; "-" is an empty quadrant.
        #[arg(num_args = 4, value_names = ["Q1", "Q2", "Q3", "Q4"], required = true)]
        quadrants: Vec<String>,
        /// The table directory to read (it needs Grundy values for every quadrant's level).
        #[arg(long, value_name = "DIR")]
        tables: PathBuf,
        /// Print JSON: quadrants, quadrant_values, value, outcome, winning_move.
        #[arg(long)]
        json: bool,
    },
    /// List the winning first moves of rectangles, as CSV (rows,cols,winning_moves): every
    /// rectangle in --tables, or the --rows x --cols rectangle (solving that box in memory
    /// when no --tables is given: no tables needed).
    #[command(group(clap::ArgGroup::new("source").args(["tables", "rows"]).required(true).multiple(true)))]
    Openings {
        /// The table directory to read.
        #[arg(long, value_name = "DIR")]
        tables: Option<PathBuf>,
        /// Rows of the rectangle (with --cols).
        #[arg(long, value_name = "R", requires = "cols", value_parser = clap::value_parser!(u32).range(1..=255))]
        rows: Option<u32>,
        /// Columns of the rectangle (with --rows).
        #[arg(long, value_name = "C", requires = "rows", value_parser = clap::value_parser!(u32).range(1..=255))]
        cols: Option<u32>,
        /// With --rows and --cols: every rectangle inside that box, not only the box itself.
        #[arg(long, requires = "rows")]
        all: bool,
        /// Solve the box in memory even when its estimate is more than 30 days (otherwise
        /// refused before it starts; a box whose mark bits exceed the memory available is refused anyway).
        #[arg(long, requires = "rows", conflicts_with = "tables")]
        force: bool,
        /// Write the CSV to this file (atomically) instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// The rectangle census: the winning first moves of every rectangle inside thin boxes
    /// solved with the few-row engine (e.g. 3x20000, 4x3000), merged with openings CSV files,
    /// as one CSV (rows,cols,winning_moves) of the rectangles with rows <= cols (a taller
    /// rectangle's moves are its transpose's, turned).
    #[command(long_about = "The rectangle census: the winning first moves of every rectangle inside thin boxes solved \
with the few-row engine, merged with openings CSV files, as one CSV (rows,cols,winning_moves) of the rectangles with \
rows <= cols, by rows then columns (a taller rectangle's moves are its transpose's, turned; moves are row:col, 0-based).\n\n\
Each box is solved in memory in turn (--dry-run prices each); its openings are kept in WORK/openings-RxC.csv, \
its positions and losses level by level in WORK/levels-RxC.csv, and the box in progress checkpoints to WORK/RxC.checkpoint: run the same command again after \
a stop and it goes on from there. Sources that disagree on a rectangle stop it with both named. The counts of \
rectangles by winning moves, and every rectangle with several, are printed at the end.\n\n\
Example: chomp census --box 3x20000,4x3000,5x500 --include results/rectangle-openings-21x21.csv --work /tmp/census --out census.csv")]
    Census {
        /// Boxes to solve, RxC with at most 8 rows or columns (comma-separated or repeated).
        #[arg(long = "box", value_name = "RxC", value_delimiter = ',')]
        boxes: Vec<String>,
        /// Openings CSV files to merge in (as chomp openings writes), e.g. results/rectangle-openings-21x21.csv.
        #[arg(long, value_name = "FILE")]
        include: Vec<PathBuf>,
        /// Working directory: each box's openings once solved, and the checkpoint of the box in progress.
        #[arg(long, value_name = "DIR")]
        work: PathBuf,
        /// Write the census here (atomically).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Most memory a box's table and sets may use (bytes, or with K, M, G, T).
        #[arg(long, value_name = "SIZE", value_parser = parse_size)]
        max_memory: Option<u64>,
        /// Print each box's estimate and stop.
        #[arg(long)]
        dry_run: bool,
    },
    /// Count the losses of every box inside the tables of a box, as CSV
    /// (rows,cols,positions,losses; positions counts the non-empty positions of the box).
    Boxes {
        /// The table directory of a complete box run.
        #[arg(long, value_name = "DIR")]
        tables: PathBuf,
        /// Write the CSV to this file (atomically) instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Export a table directory as one flat file: every loss, or every position with its outcome and Grundy value.
    Export(crate::export::ExportArgs),
    /// Draw the plots of a table directory (PNG and SVG): loss share, conjecture ratio, Grundy heat map;
    /// or, with --openings, the map of every rectangle's winning first move.
    Plot {
        /// Table directories to read (their manifests' level statistics; repeat to merge
        /// runs, e.g. a loss frontier and a Grundy run; an unfinished run gives its completed levels).
        #[arg(long, value_name = "DIR", required_unless_present_any = ["openings", "census"])]
        tables: Vec<PathBuf>,
        /// An openings CSV (as chomp openings writes): draw openings.png/.svg from it instead.
        #[arg(long, value_name = "FILE", conflicts_with = "tables")]
        openings: Option<PathBuf>,
        /// A census CSV (as chomp census writes): draw census.png/.svg, the column of every thin
        /// rectangle's first winning move against its length, instead.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["tables", "openings"])]
        census: Option<PathBuf>,
        /// Where to write loss-share, conjecture-ratio and grundy-heatmap .png/.svg (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Write summary.csv, summary.json, grundy_histogram.csv and winning_moves.csv of one or more runs (merged
    /// level by level; they must agree where they overlap) and, for runs reaching 92 tiles,
    /// print the conjecture ratio's trend (a least-squares line from 90 tiles on).
    Summary {
        /// Table directories to read (repeat to merge; an unfinished run gives its completed levels).
        #[arg(long, value_name = "DIR", required = true)]
        tables: Vec<PathBuf>,
        /// Where to write the files (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Overwrite summaries in DIR that hold levels the runs read do not (refused otherwise:
        /// a summary of a shorter run would silently drop published levels).
        #[arg(long)]
        force: bool,
    },
    /// Write the OEIS b-files of the tile-count universe from summary.csv files: A112470
    /// (losses, n = 0…), A112471 (wins), and where the winning moves were counted
    /// (solve --count-moves) A112472 (one winning move) and A112473 (several).
    Oeis {
        /// summary.csv files to read (repeat to merge; they must agree where they overlap).
        #[arg(long, value_name = "FILE", required = true)]
        summary: Vec<PathBuf>,
        /// Where to write the b-files (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Overwrite b-files in DIR that hold terms the summaries read do not.
        #[arg(long)]
        force: bool,
    },
    /// Re-check a table directory: checksums, tables and sampled game invariants.
    Verify {
        /// The table directory to check.
        #[arg(long, value_name = "DIR")]
        tables: PathBuf,
        /// Random positions to check against their children, spread evenly over the
        /// sampled levels (at least one per level; half of each level's share are losses).
        #[arg(long, default_value_t = 2000)]
        samples: u64,
        /// Seed of the sampler (the same seed checks the same positions).
        #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
        seed: u64,
        /// Sample only levels of at least this many tiles (e.g. the top of a frontier run).
        #[arg(long, value_name = "N", default_value_t = 1)]
        min_tiles: u32,
        /// Sample only levels of at most this many tiles (default: no bound).
        #[arg(long, value_name = "N")]
        max_tiles: Option<u32>,
        /// Accept a run that has not finished (check only its completed levels).
        #[arg(long)]
        allow_incomplete: bool,
        /// Also prove every completed level from the smaller ones: the sieve runs again on
        /// the stored losses, and each level's stored losses must be exactly the positions
        /// no smaller stored loss is a child of (its Grundy values, those the smaller
        /// levels' stored values give). Finds a false loss and a false win even when every
        /// checksum was recomputed. About the time and memory of the run that wrote the
        /// tables, on every core; progress per level on stderr.
        #[arg(long)]
        full: bool,
        /// Most memory the proof's mark bits may use (bytes, or with K, M, G, T; as for
        /// solve: levels are then proven in windows). Default: what the system reports available.
        #[arg(long, value_name = "SIZE", value_parser = parse_size, requires = "full")]
        max_memory: Option<u64>,
        /// With --full: print the proof's estimated time and peak memory and stop.
        #[arg(long, requires = "full")]
        dry_run: bool,
        /// Only compare the directory with a published manifest (e.g.
        /// results/frontier-140-manifest.json): does it hold exactly those bytes?
        /// Missing, extra and changed files are listed.
        #[arg(long, value_name = "MANIFEST", conflicts_with_all = ["full", "samples", "min_tiles", "max_tiles"])]
        against: Option<PathBuf>,
    },
    /// Time the engine on real levels (in a temporary directory) and report throughput and memory.
    Bench {
        /// Losses for levels 1 to N.
        #[arg(long, value_name = "N", default_value_t = 80)]
        max_tiles: u32,
        /// Grundy values for levels 1 to M.
        #[arg(long, value_name = "M", default_value_t = 0)]
        grundy_max_tiles: u32,
        /// Working directory for the temporary tables (default: the system temp dir).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Instead, time probes (outcome and Grundy value) of random positions on this table directory.
        #[arg(long, value_name = "DIR")]
        probe: Option<PathBuf>,
        /// Instead, time solving the box of R rows (with --cols) in memory, as a front end does
        /// (`chomp openings --rows R --cols C`): min and median of --repeat solves.
        #[arg(long, value_name = "R", requires = "cols", conflicts_with_all = ["probe", "grundy_max_tiles"])]
        rows: Option<u32>,
        /// Columns of the box to time (with --rows).
        #[arg(long, value_name = "C", requires = "rows")]
        cols: Option<u32>,
        /// Solves of the box to time.
        #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
        repeat: u32,
    },
    /// Let the computer choose a move at one of four levels (docs/guide.md, "Play against the computer").
    #[command(long_about = "Let the computer choose one move from POSITION at a level:\n  \
        easy       random, but takes a move to a loss of the closed-form families (equal-arm hooks, two rows (a, a-1), two columns)\n  \
        medium     also knows every loss up to 12 tiles and avoids handing the opponent a winning reply it knows\n  \
        hard       also knows every loss up to 25 tiles and searches two plies for a move that forces a loss\n  \
        very-hard  perfect play from the tables: a winning move whenever one exists\n\n\
        The same --seed always gives the same move. The position must lie in the tables. With --json it prints\n\
        {\"move\":[row,col],\"position\":[rows after the move],\"level\":...,\"reason\":...}.\n\
        The position \"1\" (only the poisoned tile) has no move: the game is over.\n\
        More: docs/guide.md, \"Play against the computer\".")]
    Play {
        /// Row lengths, top row first: "3 2 1" or "3,2,1".
        #[arg(allow_hyphen_values = true)]
        position: String,
        /// The table directory to read, e.g. results/box-8x15.
        #[arg(long, value_name = "DIR", required_unless_present = "rows", conflicts_with = "rows")]
        tables: Option<PathBuf>,
        /// Instead of --tables: solve the --rows x --cols box in memory first (no tables needed).
        #[arg(long, value_name = "R", requires = "cols", value_parser = clap::value_parser!(u32).range(1..=255))]
        rows: Option<u32>,
        /// Columns of the box solved in memory (with --rows).
        #[arg(long, value_name = "C", requires = "rows", value_parser = clap::value_parser!(u32).range(1..=255))]
        cols: Option<u32>,
        /// easy, medium, hard or very-hard.
        #[arg(long, default_value = "very-hard")]
        level: chomp_tables::play::Level,
        /// Seed of the player's random choices.
        #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
        seed: u64,
        /// Print JSON: move, position (after the move), level, reason.
        #[arg(long)]
        json: bool,
    },
    /// Play every level against every other from random rectangles and print the win rates.
    #[command(long_about = "Play every level against every other level: GAMES games with each side starting, each from a\n\
        random rectangle inside the tables (from --min-side x --min-side to --max-rows x --max-cols), and print a\n\
        table of win rates (row level against column level) and each level's overall score.")]
    Match {
        /// The table directory to read (very-hard plays from it), e.g. results/box-8x15.
        #[arg(long, value_name = "DIR")]
        tables: PathBuf,
        /// Games per pair of levels and per starting side.
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
        games: u32,
        /// Seed of the rectangles and of the players.
        #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
        seed: u64,
        /// Fewest rows and columns of a starting rectangle (2 lets the families decide many games at once).
        #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(2..))]
        min_side: u32,
        /// Largest number of rows of a starting rectangle (default: the tables' box).
        #[arg(long, value_name = "R")]
        max_rows: Option<u32>,
        /// Largest number of columns of a starting rectangle (default: the tables' box).
        #[arg(long, value_name = "C")]
        max_cols: Option<u32>,
    },
    /// Serve queries, computer moves and a page to play Chomp over HTTP (JSON API: docs/server.md).
    #[command(long_about = "Serve the tables over HTTP:\n  \
        GET /                                      a page to play Chomp against the computer\n  \
        GET /v1/query?position=5,3,3,1,1           the JSON of `chomp query --json`\n  \
        GET /v1/play?position=..&level=hard[&seed=N]  a computer move, the JSON of `chomp play --json`\n  \
        GET /v1/openings?rows=R&cols=C             winning first moves of a rectangle\n  \
        GET /v1/tables                             the directories served and their bounds\n  \
        GET /health                                {\"status\":\"ok\"}\n\n\
        Errors are JSON {\"error\":...}: 400 for bad input, 404 for a position outside every table.\n\
        A position is answered from the first directory holding its Grundy value, else the first covering it.\n\
        Logs go to standard error; set CHOMP_LOG=debug for one line per request. Stops on Ctrl-C or SIGTERM.\n\
        Every route, flag and limit: docs/server.md.")]
    Serve(ServeArgs),
    /// n-dimensional Chomp in a box d1 x ... x dk: positions, losses, winning first moves, tables.
    Nd(crate::nd::NdArgs),
    /// The divisor game on N (n-D Chomp in the box of N's exponents + 1): the numbers that win when named first.
    Divisors(crate::nd::DivisorsArgs),
}

/// The engine of `chomp solve`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// One bit per position, level by level (every universe).
    Box,
    /// One entry per prefix (boxes with at most 8 rows or columns).
    FewRow,
}

#[derive(clap::Args)]
pub struct RunFlags {
    /// Start over: discard what the table directory holds (another job's
    /// tables, or this job's, e.g. to rebuild a damaged table) instead of resuming;
    /// and start even a job whose estimate is far beyond this machine (more than 30 days, or four
    /// times the memory or twice the free disk it has), which is otherwise refused before it starts.
    #[arg(long)]
    pub force: bool,
    /// Start a job whose estimate is far beyond this machine, as --force does, but resume
    /// the levels its table directory holds instead of starting over.
    #[arg(long)]
    pub ignore_estimate: bool,
    /// No progress lines.
    #[arg(long, short)]
    pub quiet: bool,
    /// Stop before a level whose estimated memory exceeds SIZE (bytes, or with K, M, G, T;
    /// default: the memory the system and the cgroup, e.g. Slurm's --mem, leave available).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_memory: Option<u64>,
    /// Print the estimate of every level (time, peak memory, disk) and the windows of mark bits the run will open, and stop without computing.
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: price the plan for K MPI processes (each process's
    /// share of the mark bits, its peak memory) without starting them; under
    /// mpiexec the dry run prices the processes it runs on. --max-memory is then per process.
    #[arg(long, value_name = "K", requires = "dry_run", value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub processes: Option<u32>,
    /// With --processes: the threads of each process (default: this machine's).
    #[arg(long, value_name = "T", requires = "processes", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub threads: Option<u32>,
    /// Put scratch files here (e.g. node-local disk) instead of OUT/.work.
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
    /// Most positions of each level checked against their children once its tables are written:
    /// one in 2^23 (about 8.4 million), at least 64 (half of them losses), and a dozen at its edge (the fullest rows and columns); the same on every rerun; a failure stops the run; 0: none.
    #[arg(long, value_name = "N", default_value_t = chomp_tables::solve::CHECK_SAMPLES)]
    pub check_samples: u64,
    /// Write the end-of-run report as JSON to FILE: the run, its levels (seconds, marks, largest gather) and every
    /// process's work (marks, enumeration steps, compute and wait seconds, CPU, peak memory).
    #[arg(long, value_name = "FILE")]
    pub report_json: Option<PathBuf>,
}

/// Parses `4G`, `512M`, `1T`, `100000` (bytes; binary units).
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1u64 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                _ => return Err(format!("unknown unit {c:?} (use K, M, G or T)")),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    let v: f64 = num.trim().parse().map_err(|_| format!("{s:?} is not a size like 4G or 512M"))?;
    if v.is_nan() || v <= 0.0 || !v.is_finite() {
        return Err(format!("{s:?} is not a positive size"));
    }
    Ok((v * mult as f64) as u64)
}

/// What `chomp serve` is asked for (docs/server.md).
#[derive(clap::Args)]
pub struct ServeArgs {
    /// A table directory to serve (repeat for several), e.g. --tables results/box-8x15 --tables results/losses-100.
    #[arg(long, value_name = "DIR", required = true)]
    pub tables: Vec<PathBuf>,
    /// Address to listen on; port 0 picks a free port (the chosen address is printed).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    pub addr: String,
    /// Most connections served at once. At the cap a newcomer takes the place of a
    /// connection stalled or idle for a second or more (closed); one that finds
    /// none within 5 s gets a 503. Lowered if `ulimit -n` leaves too few descriptors.
    #[arg(long, value_name = "N", default_value_t = 512)]
    pub max_connections: usize,
    /// Seconds a connection may take to send a request's headers, or stay idle between requests.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub idle_timeout: u64,
    /// Seconds a request may take to be answered (then 503).
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub request_timeout: u64,
    /// Seconds an answer may wait for a client that reads nothing (e.g. one sending
    /// requests and never reading the answers) before its connection is closed.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub write_timeout: u64,
    /// Do not load every level at start (levels then load on first use).
    #[arg(long)]
    pub lazy: bool,
    /// Memory for decoded blocks of format-3 tables, per table directory, in MiB
    /// (blocks not used lately are dropped first; GET /health reports the bytes held).
    #[arg(long, value_name = "MIB", default_value_t = 256)]
    pub cache_mib: usize,
    /// Answers computed at once (default: one per core); further requests wait their turn, first come first served.
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Serve a directory only if it is the published one: one published manifest per
    /// --tables, in the same order, each equal byte for byte to its directory's
    /// manifest.json (else the server does not start). Every answer then comes from the
    /// published bytes.
    #[arg(long, value_name = "MANIFEST")]
    pub against: Vec<PathBuf>,
}

# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_memctl_global_optspecs
    string join \n db= schema= format= ns= busy-timeout= key-env= q/quiet now= h/help V/version
end

function __fish_memctl_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_memctl_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_memctl_using_subcommand
    set -l cmd (__fish_memctl_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c memctl -n "__fish_memctl_needs_command" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_needs_command" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_needs_command" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_needs_command" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_needs_command" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_needs_command" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_needs_command" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_needs_command" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_needs_command" -s V -l version -d 'Print version'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "threads" -d 'Work with threads (conversations)'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "history" -d 'List a thread\'s checkpoints, newest first'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "show" -d 'Show a thread\'s state the way a person reads a chat'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "dump" -d 'Print a thread\'s messages as LangChain\'s model_dump() dictionaries'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "diff" -d 'Show what changed between two checkpoints of a thread'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "tokens" -d 'Count a thread\'s tokens (per message), or every thread\'s (--all)'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "trim" -d 'Trim threads to their newest messages (appends a checkpoint, like update_state)'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "rm" -d 'Remove messages from a thread (appends a checkpoint; --purge also scrubs history)'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "summarize" -d 'Summarize the older messages of threads through a model endpoint (OpenAI-compatible)'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "find" -d 'Find the conversations that mention something (message text, tool calls, string state)'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "forget" -d 'Erase a person\'s data from the whole database, with proof: delete their threads (--thread, --meta) and scrub what --match matches from every other thread\'s history; then zero the freed space, search every byte for what was erased, and print a receipt'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "stats" -d 'What takes the space: file, WAL, free pages, largest threads, bytes per channel, orphans'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "prune" -d 'Delete whole threads: idle ones (--idle 30d) or named ones (--thread T)'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "gc" -d 'Delete old checkpoints inside threads, keeping each thread resumable as before'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "rekey" -d 'Re-encrypt every stored value: rotate the AES key, encrypt a plain database, or decrypt one (--decrypt). Rewrites rows in place, a short transaction at a time; run it again after an interruption to finish'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "copy" -d 'Copy a thread, whole or up to a checkpoint (a fork), to a new thread id in the same database or into another one (a SQLite file or a PostgreSQL URL; a file that does not exist is created in SqliteSaver\'s layout). The copy is written in one transaction, exactly as the target\'s saver would write it: every checkpoint of every namespace, the pending writes, the same checkpoint ids; encrypted rows as they are stored'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "store" -d 'The LangGraph Store (long-term memory: `store.put` items): list namespaces and items, read one, delete items, sweep expired ones. Reads never refresh a TTL'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "ttl" -d 'Apply the TTL policy a LangGraph deployment declares in its langgraph.json (checkpointer.ttl, store.ttl) to a self-hosted database, from cron: threads idle longer than default_ttl are pruned (strategy delete) or collected to their latest checkpoint (keep_latest), and the store\'s expired items are swept'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "man" -d 'Write man pages: memctl.1 and one page per command (memctl-threads-list.1, …)'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "browse" -d 'Browse threads, history, checkpoints and the Store in a full-screen terminal UI (read-only: actions are shown as memctl commands, never run)'
complete -c memctl -n "__fish_memctl_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c memctl -n "__fish_memctl_using_subcommand threads; and not __fish_seen_subcommand_from list help" -l sort -d 'Sort order (largest / newest first)' -r -f -a "updated\t'Most recently updated first'
size\t'Largest stored size first'
messages\t'Most messages first'
checkpoints\t'Most checkpoints first'
tokens\t'Most tokens first (approximate counter)'"
complete -c memctl -n "__fish_memctl_using_subcommand threads; and not __fish_seen_subcommand_from list help" -l limit -d 'Show at most this many threads' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and not __fish_seen_subcommand_from list help" -l min-tokens -d 'Only threads whose latest state has at least this many tokens (approximate counter)' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and not __fish_seen_subcommand_from list help" -l meta -d 'Only threads whose metadata (the configurable keys the app passed, in any of their checkpoints) or latest state channel KEY equals VALUE; repeat to require several. The threads `forget --meta` would delete' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and not __fish_seen_subcommand_from list help" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand threads; and not __fish_seen_subcommand_from list help" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and not __fish_seen_subcommand_from list help" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand threads; and not __fish_seen_subcommand_from list help" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and not __fish_seen_subcommand_from list help" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and not __fish_seen_subcommand_from list help" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and not __fish_seen_subcommand_from list help" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and not __fish_seen_subcommand_from list help" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand threads; and not __fish_seen_subcommand_from list help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand threads; and not __fish_seen_subcommand_from list help" -f -a "list" -d 'One row per thread: checkpoints, messages, last step, last update, size'
complete -c memctl -n "__fish_memctl_using_subcommand threads; and not __fish_seen_subcommand_from list help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c memctl -n "__fish_memctl_using_subcommand threads; and __fish_seen_subcommand_from list" -l sort -d 'Sort order (largest / newest first)' -r -f -a "updated\t'Most recently updated first'
size\t'Largest stored size first'
messages\t'Most messages first'
checkpoints\t'Most checkpoints first'
tokens\t'Most tokens first (approximate counter)'"
complete -c memctl -n "__fish_memctl_using_subcommand threads; and __fish_seen_subcommand_from list" -l limit -d 'Show at most this many threads' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and __fish_seen_subcommand_from list" -l min-tokens -d 'Only threads whose latest state has at least this many tokens (approximate counter)' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and __fish_seen_subcommand_from list" -l meta -d 'Only threads whose metadata (the configurable keys the app passed, in any of their checkpoints) or latest state channel KEY equals VALUE; repeat to require several. The threads `forget --meta` would delete' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and __fish_seen_subcommand_from list" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand threads; and __fish_seen_subcommand_from list" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and __fish_seen_subcommand_from list" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand threads; and __fish_seen_subcommand_from list" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and __fish_seen_subcommand_from list" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and __fish_seen_subcommand_from list" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and __fish_seen_subcommand_from list" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand threads; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand threads; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand threads; and __fish_seen_subcommand_from help" -f -a "list" -d 'One row per thread: checkpoints, messages, last step, last update, size'
complete -c memctl -n "__fish_memctl_using_subcommand threads; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c memctl -n "__fish_memctl_using_subcommand history" -s t -l thread -d 'The thread id (`configurable.thread_id`)' -r
complete -c memctl -n "__fish_memctl_using_subcommand history" -l limit -d 'Show only the newest N checkpoints (after --source and --before, as `get_state_history(limit=)`)' -r
complete -c memctl -n "__fish_memctl_using_subcommand history" -l source -d 'Only checkpoints whose metadata `source` is SRC (`input`, `loop`, `update`, `fork`), as `get_state_history(config, filter={"source": SRC})`' -r
complete -c memctl -n "__fish_memctl_using_subcommand history" -l before -d 'Only checkpoints older than this one (its id sorts after theirs; a unique prefix will do), as `get_state_history(config, before=...)`' -r
complete -c memctl -n "__fish_memctl_using_subcommand history" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand history" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand history" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand history" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand history" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand history" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand history" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand history" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand history" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand show" -s t -l thread -d 'The thread id (`configurable.thread_id`)' -r
complete -c memctl -n "__fish_memctl_using_subcommand show" -l checkpoint -d 'The checkpoint to show (default: the latest; a unique prefix of its id will do)' -r
complete -c memctl -n "__fish_memctl_using_subcommand show" -l last -d 'Show only the last N messages (the state\'s other channels and what it waits on are shown in full)' -r
complete -c memctl -n "__fish_memctl_using_subcommand show" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand show" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand show" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand show" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand show" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand show" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand show" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand show" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand dump" -s t -l thread -d 'The thread id (`configurable.thread_id`)' -r
complete -c memctl -n "__fish_memctl_using_subcommand dump" -l checkpoint -d 'The checkpoint to dump (default: the latest)' -r
complete -c memctl -n "__fish_memctl_using_subcommand dump" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand dump" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand dump" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand dump" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand dump" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand dump" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand dump" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand dump" -l raw -d 'Print the whole decoded checkpoint (channels, versions, metadata, pending writes) instead of the messages'
complete -c memctl -n "__fish_memctl_using_subcommand dump" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand dump" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand diff" -s t -l thread -d 'The thread id (`configurable.thread_id`)' -r
complete -c memctl -n "__fish_memctl_using_subcommand diff" -l from -d 'The older checkpoint (default: the parent of --to)' -r
complete -c memctl -n "__fish_memctl_using_subcommand diff" -l to -d 'The newer checkpoint (default: the latest)' -r
complete -c memctl -n "__fish_memctl_using_subcommand diff" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand diff" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand diff" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand diff" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand diff" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand diff" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand diff" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand diff" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand diff" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand tokens" -s t -l thread -d 'The thread to count, message by message' -r
complete -c memctl -n "__fish_memctl_using_subcommand tokens" -l limit -d 'With --all: show at most this many threads' -r
complete -c memctl -n "__fish_memctl_using_subcommand tokens" -l counter -d 'The token counter' -r -f -a "approx\t'LangChain\'s count_tokens_approximately (default parameters)'
o200k\t'tiktoken o200k_base with langchain_openai\'s chat framing (gpt-4o, gpt-4.1, gpt-5, o1, o3)'
cl100k\t'tiktoken cl100k_base with langchain_openai\'s chat framing (gpt-4, gpt-3.5-turbo)'
usage\t'What the provider billed: usage_metadata of the AI messages (tokens command only)'"
complete -c memctl -n "__fish_memctl_using_subcommand tokens" -l model -d 'Count as langchain_openai does for this model (gpt-4o → o200k, gpt-4 → cl100k…); overrides --counter' -r
complete -c memctl -n "__fish_memctl_using_subcommand tokens" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand tokens" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand tokens" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand tokens" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand tokens" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand tokens" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand tokens" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand tokens" -l all -d 'Count every thread (its latest state), one row per thread, largest first'
complete -c memctl -n "__fish_memctl_using_subcommand tokens" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand tokens" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand trim" -s t -l thread -d 'Rewrite this thread' -r
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l idle -d 'With --all: only threads not updated for this long (e.g. 7d, 12h, 90m)' -r
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l min-messages -d 'With --all: only threads with at least this many messages' -r
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l keep -d 'Keep the last N messages (a leading system message counts as one, as in LangChain\'s trim_messages with token_counter=len). At least 1: to clear a thread, use `memctl rm --all-messages`' -r
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l max-tokens -d 'Keep the last messages that fit in N tokens (by --counter / --model; approximate by default)' -r
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l counter -d 'The token counter' -r -f -a "approx\t'LangChain\'s count_tokens_approximately (default parameters)'
o200k\t'tiktoken o200k_base with langchain_openai\'s chat framing (gpt-4o, gpt-4.1, gpt-5, o1, o3)'
cl100k\t'tiktoken cl100k_base with langchain_openai\'s chat framing (gpt-4, gpt-3.5-turbo)'
usage\t'What the provider billed: usage_metadata of the AI messages (tokens command only)'"
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l model -d 'Count as langchain_openai does for this model (gpt-4o → o200k, gpt-4 → cl100k…); overrides --counter' -r
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l settle -d 'After writing, wait this long (e.g. 1s, 0s) and check that no live app committed a newer checkpoint on an edited thread; such an edit is reported `superseded` (the app\'s turn wins; memctl\'s edit is not in effect) and the exit code is 3. No wait when no app had the file open (a WAL-mode file without its -wal file)' -r
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l all -d 'Rewrite every thread that passes the filters (threads waiting on work are skipped)'
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l keep-first -d 'Also keep the first non-system message (often the user\'s name and goal)'
complete -c memctl -n "__fish_memctl_using_subcommand trim" -s n -l dry-run -d 'Show what would change and write nothing'
complete -c memctl -n "__fish_memctl_using_subcommand trim" -l force -d 'Rewrite even a thread that is waiting on an interrupt or has pending work (its waiting node runs again on the next invoke)'
complete -c memctl -n "__fish_memctl_using_subcommand trim" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand trim" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand rm" -s t -l thread -d 'The thread id (`configurable.thread_id`)' -r
complete -c memctl -n "__fish_memctl_using_subcommand rm" -l id -d 'Remove the message with this id (repeatable)' -r
complete -c memctl -n "__fish_memctl_using_subcommand rm" -l index -d 'Remove the message at this position; negative counts from the end (-1 = last)' -r
complete -c memctl -n "__fish_memctl_using_subcommand rm" -l type -d 'Remove every message of this kind (repeatable)' -r -f -a "human\t'HumanMessage'
ai\t'AIMessage'
tool\t'ToolMessage'
system\t'SystemMessage'"
complete -c memctl -n "__fish_memctl_using_subcommand rm" -l match -d 'Remove every message that matches this regular expression: its text, or the name or JSON arguments of one of its tool calls' -r
complete -c memctl -n "__fish_memctl_using_subcommand rm" -l settle -d 'After writing, wait this long (e.g. 1s, 0s) and check that no live app committed a newer checkpoint on an edited thread; such an edit is reported `superseded` (the app\'s turn wins; memctl\'s edit is not in effect) and the exit code is 3. No wait when no app had the file open (a WAL-mode file without its -wal file)' -r
complete -c memctl -n "__fish_memctl_using_subcommand rm" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand rm" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand rm" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand rm" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand rm" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand rm" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand rm" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand rm" -l all-messages -d 'Remove every message (clear the conversation)'
complete -c memctl -n "__fish_memctl_using_subcommand rm" -l purge -d 'Also scrub the removed messages from every older checkpoint and write of the thread, then zero the freed space, so their text is gone from the file (for secrets)'
complete -c memctl -n "__fish_memctl_using_subcommand rm" -s y -l yes -d 'With --purge, on a terminal, do not ask before writing (the question is only asked when stdin and stdout are a terminal; never in a dry run, a pipe or cron)'
complete -c memctl -n "__fish_memctl_using_subcommand rm" -s n -l dry-run -d 'Show what would change and write nothing'
complete -c memctl -n "__fish_memctl_using_subcommand rm" -l force -d 'Rewrite even a thread that is waiting on an interrupt or has pending work (its waiting node runs again on the next invoke)'
complete -c memctl -n "__fish_memctl_using_subcommand rm" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand rm" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -s t -l thread -d 'Rewrite this thread' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l idle -d 'With --all: only threads not updated for this long (e.g. 7d, 12h, 90m)' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l min-messages -d 'With --all: only threads with at least this many messages' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l min-tokens -d 'With --all: only threads whose state has at least this many tokens (by --counter)' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l keep -d 'Keep the last N messages verbatim (as `trim --keep`); older ones are summarized' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l keep-tokens -d 'Keep the last messages that fit in N tokens verbatim; older ones are summarized' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l counter -d 'The counter for --keep-tokens and --min-tokens (approx, o200k or cl100k)' -r -f -a "approx\t'LangChain\'s count_tokens_approximately (default parameters)'
o200k\t'tiktoken o200k_base with langchain_openai\'s chat framing (gpt-4o, gpt-4.1, gpt-5, o1, o3)'
cl100k\t'tiktoken cl100k_base with langchain_openai\'s chat framing (gpt-4, gpt-3.5-turbo)'
usage\t'What the provider billed: usage_metadata of the AI messages (tokens command only)'"
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l endpoint -d 'The OpenAI-compatible API base URL, http or https (e.g. http://localhost:11434/v1). Redirects are not followed; credentials in it are never printed' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l model -d 'The model the endpoint should use for summaries' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l api-key-env -d 'The environment variable holding the API key (sent as a bearer token, never printed)' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l concurrency -d 'Requests in flight at once' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l timeout -d 'Seconds to wait for one answer' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l retries -d 'Retries after a 429, a 5xx, a timeout or a connection error (with backoff)' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l max-input-tokens -d 'The most transcript one request carries (approximate tokens). A longer one is summarized in parts and then the part summaries are summarized (map-reduce): nothing is left out' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l prompt-file -d 'A prompt template to use instead of memctl\'s (at most 1 MiB); `{messages}` marks the transcript' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l summary-key -d 'Store the summary in this state channel (e.g. `summary`) instead of a summary message; an existing value is fed into the next summary' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l settle -d 'After writing, wait this long (e.g. 1s, 0s) and check that no live app committed a newer checkpoint on an edited thread; such an edit is reported `superseded` (the app\'s turn wins; memctl\'s edit is not in effect) and the exit code is 3. No wait when no app had the file open (a WAL-mode file without its -wal file)' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l all -d 'Rewrite every thread that passes the filters (threads waiting on work are skipped)'
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l new-key -d 'Write --summary-key even where the thread has no such channel yet (the graph must declare it: LangGraph reads only the channels of its state schema)'
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -s n -l dry-run -d 'Show what would change and write nothing'
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -l force -d 'Rewrite even a thread that is waiting on an interrupt or has pending work (its waiting node runs again on the next invoke)'
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand summarize" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand find" -l meta -d 'Only threads whose metadata (incl. the configurable keys the app passed) or state channel KEY equals VALUE; repeat to require several. Alone, lists those threads' -r
complete -c memctl -n "__fish_memctl_using_subcommand find" -s t -l thread -d 'Search one thread only' -r
complete -c memctl -n "__fish_memctl_using_subcommand find" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand find" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand find" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand find" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand find" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand find" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand find" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand find" -s e -l regex -d 'PATTERN is a regular expression (Rust regex syntax)'
complete -c memctl -n "__fish_memctl_using_subcommand find" -s i -l ignore-case -d 'Match without regard to case'
complete -c memctl -n "__fish_memctl_using_subcommand find" -l history -d 'Search every checkpoint of each thread, not only its latest state'
complete -c memctl -n "__fish_memctl_using_subcommand find" -l count -d 'Print how many hits each thread has instead of the hits'
complete -c memctl -n "__fish_memctl_using_subcommand find" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand find" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand forget" -s t -l thread -d 'Delete this thread (repeatable): all its namespaces, checkpoints and writes, as `prune` does. A thread already gone is reported, so a second run finishes the job' -r
complete -c memctl -n "__fish_memctl_using_subcommand forget" -l meta -d 'Delete every thread whose metadata (the configurable keys the app passed) or latest state has KEY equal to VALUE (repeat to require several), as `find --meta` finds them' -r
complete -c memctl -n "__fish_memctl_using_subcommand forget" -l match -d 'Across every other thread, remove the messages whose text or tool calls match (with their tool-call partners) from the latest state and every older checkpoint and pending write, and replace the match by `[erased]` wherever else it stands (summaries, other state channels, tool-call arguments). A literal unless --regex' -r
complete -c memctl -n "__fish_memctl_using_subcommand forget" -l receipt -d 'Also write the receipt to this file, as JSON (it holds digests, never the erased text). Not written in a dry run' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand forget" -l settle -d 'After writing, wait this long (e.g. 1s, 0s) and check that no live app committed a newer checkpoint on an edited thread; such an edit is reported `superseded` (the app\'s turn wins; memctl\'s edit is not in effect) and the exit code is 3. No wait when no app had the file open (a WAL-mode file without its -wal file)' -r
complete -c memctl -n "__fish_memctl_using_subcommand forget" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand forget" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand forget" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand forget" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand forget" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand forget" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand forget" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand forget" -s e -l regex -d '--match is a regular expression (Rust regex syntax)'
complete -c memctl -n "__fish_memctl_using_subcommand forget" -s i -l ignore-case -d '--match without regard to case'
complete -c memctl -n "__fish_memctl_using_subcommand forget" -s y -l yes -d 'On a terminal, do not ask before writing (the question is only asked when stdin and stdout are a terminal; never in a dry run, a pipe or cron)'
complete -c memctl -n "__fish_memctl_using_subcommand forget" -s n -l dry-run -d 'Show what would change and write nothing'
complete -c memctl -n "__fish_memctl_using_subcommand forget" -l force -d 'Rewrite even a thread that is waiting on an interrupt or has pending work (its waiting node runs again on the next invoke)'
complete -c memctl -n "__fish_memctl_using_subcommand forget" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand forget" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand stats" -l top -d 'How many of the largest threads to list' -r
complete -c memctl -n "__fish_memctl_using_subcommand stats" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand stats" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand stats" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand stats" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand stats" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand stats" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand stats" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand stats" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand stats" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand prune" -l idle -d 'Delete every thread whose latest checkpoint is older than this (e.g. 30d, 12h). With --thread, only the named threads that are this idle' -r
complete -c memctl -n "__fish_memctl_using_subcommand prune" -s t -l thread -d 'Delete this thread (repeatable), in all namespaces, like SqliteSaver.delete_thread. With --idle, only if it is idle that long' -r
complete -c memctl -n "__fish_memctl_using_subcommand prune" -l batch -d 'Threads per transaction (short transactions keep the app\'s waits short)' -r
complete -c memctl -n "__fish_memctl_using_subcommand prune" -l min-idle -d 'Leave alone threads written more recently than this (a live app may be using them)' -r
complete -c memctl -n "__fish_memctl_using_subcommand prune" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand prune" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand prune" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand prune" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand prune" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand prune" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand prune" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand prune" -s n -l dry-run -d 'Show what would be deleted and delete nothing'
complete -c memctl -n "__fish_memctl_using_subcommand prune" -s y -l yes -d 'On a terminal, do not ask before writing (the question is only asked when stdin and stdout are a terminal; never in a dry run, a pipe or cron)'
complete -c memctl -n "__fish_memctl_using_subcommand prune" -l vacuum -d 'Afterwards VACUUM and truncate the WAL so the file really shrinks (it holds the write lock while it rebuilds the file: exit code 3, nothing lost, if an app keeps the database busy or has a file over 64 MiB open)'
complete -c memctl -n "__fish_memctl_using_subcommand prune" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand prune" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand gc" -s t -l thread -d 'Collect this thread' -r
complete -c memctl -n "__fish_memctl_using_subcommand gc" -l keep-checkpoints -d 'Checkpoints to keep per thread and namespace, newest first (at least 1: the latest). Required: everything older is deleted, and that history (time travel, `memctl diff`) cannot be brought back; 1 keeps only the state the app resumes from' -r
complete -c memctl -n "__fish_memctl_using_subcommand gc" -l min-idle -d 'Leave alone threads written more recently than this (a live app may be using them)' -r
complete -c memctl -n "__fish_memctl_using_subcommand gc" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand gc" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand gc" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand gc" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand gc" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand gc" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand gc" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand gc" -l all -d 'Collect every thread'
complete -c memctl -n "__fish_memctl_using_subcommand gc" -s n -l dry-run -d 'Show what would be deleted and delete nothing'
complete -c memctl -n "__fish_memctl_using_subcommand gc" -s y -l yes -d 'On a terminal, do not ask before writing (the question is only asked when stdin and stdout are a terminal; never in a dry run, a pipe or cron)'
complete -c memctl -n "__fish_memctl_using_subcommand gc" -l vacuum -d 'Afterwards VACUUM and truncate the WAL so the file really shrinks (it holds the write lock while it rebuilds the file: exit code 3, nothing lost, if an app keeps the database busy or has a file over 64 MiB open)'
complete -c memctl -n "__fish_memctl_using_subcommand gc" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand gc" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -l old-key-env -d 'The environment variable holding the key the values are encrypted with now (their UTF-8 bytes, as LangGraph reads LANGGRAPH_AES_KEY). Values under it are re-encrypted with the new key, or decrypted with --decrypt' -r
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -l new-key-env -d 'The environment variable holding the key to encrypt with. Plain values are encrypted with it too; values already under it are left alone, so a run that was interrupted finishes when run again' -r
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -l batch -d 'Values rewritten per transaction: the longest a live app waits for memctl is one such transaction (at most 4 MiB of values)' -r
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -l decrypt -d 'Decrypt every value with the old key: the database becomes plain, as an app without EncryptedSerializer writes it'
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -s n -l dry-run -d 'Decrypt every value and report what would change; write nothing'
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -s y -l yes -d 'On a terminal, do not ask before writing (the question is only asked when stdin and stdout are a terminal; never in a dry run, a pipe or cron)'
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -l vacuum -d 'Afterwards VACUUM and truncate the WAL, so that no page of the file or its WAL keeps an old value (it holds the write lock while it rebuilds the file: exit code 3, nothing lost, if an app keeps the database busy or has a file over 64 MiB open)'
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand rekey" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand copy" -l thread -d 'The thread to copy' -r
complete -c memctl -n "__fish_memctl_using_subcommand copy" -l to-thread -d 'The id of the copy (default: the same id, which needs --to another database)' -r
complete -c memctl -n "__fish_memctl_using_subcommand copy" -l to -d 'The database to copy into: a SQLite file (created when it does not exist) or a PostgreSQL connection string (its saver\'s tables must exist). Default: the source database (--db)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand copy" -l at -d 'Fork: the copy ends at this root checkpoint (its ancestors and their subgraph checkpoints and pending writes go with it), so the app continues the copy from there' -r
complete -c memctl -n "__fish_memctl_using_subcommand copy" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand copy" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand copy" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand copy" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand copy" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand copy" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand copy" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand copy" -l replace -d 'Overwrite the target thread when it exists (in the same transaction as the copy)'
complete -c memctl -n "__fish_memctl_using_subcommand copy" -s n -l dry-run -d 'Read everything and say what would be copied; write nothing'
complete -c memctl -n "__fish_memctl_using_subcommand copy" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand copy" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand store; and not __fish_seen_subcommand_from namespaces ls get rm sweep help" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand store; and not __fish_seen_subcommand_from namespaces ls get rm sweep help" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and not __fish_seen_subcommand_from namespaces ls get rm sweep help" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand store; and not __fish_seen_subcommand_from namespaces ls get rm sweep help" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and not __fish_seen_subcommand_from namespaces ls get rm sweep help" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and not __fish_seen_subcommand_from namespaces ls get rm sweep help" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and not __fish_seen_subcommand_from namespaces ls get rm sweep help" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and not __fish_seen_subcommand_from namespaces ls get rm sweep help" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand store; and not __fish_seen_subcommand_from namespaces ls get rm sweep help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand store; and not __fish_seen_subcommand_from namespaces ls get rm sweep help" -f -a "namespaces" -d 'Every namespace: items, bytes of their values, expired items (what a sweep would delete), newest update'
complete -c memctl -n "__fish_memctl_using_subcommand store; and not __fish_seen_subcommand_from namespaces ls get rm sweep help" -f -a "ls" -d 'The items of one namespace (exactly that one, not those below it): key, size, created, updated, expires'
complete -c memctl -n "__fish_memctl_using_subcommand store; and not __fish_seen_subcommand_from namespaces ls get rm sweep help" -f -a "get" -d 'One item\'s value as JSON (what `store.get(namespace, key).value` returns); an expired item is shown with a note on stderr'
complete -c memctl -n "__fish_memctl_using_subcommand store; and not __fish_seen_subcommand_from namespaces ls get rm sweep help" -f -a "rm" -d 'Delete a whole namespace\'s items, or some keys, and their vectors, as `store.delete` does, in one transaction'
complete -c memctl -n "__fish_memctl_using_subcommand store; and not __fish_seen_subcommand_from namespaces ls get rm sweep help" -f -a "sweep" -d 'Delete every expired item exactly as the store\'s own `sweep_ttl` decides (for cron: exit 0 when nothing is due)'
complete -c memctl -n "__fish_memctl_using_subcommand store; and not __fish_seen_subcommand_from namespaces ls get rm sweep help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from namespaces" -l prefix -d 'Only this namespace and those below it (labels joined with \'.\': users.u-42)' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from namespaces" -l max-depth -d 'Cut namespaces to their first N labels and add up what falls together (as list_namespaces(max_depth=N) groups them)' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from namespaces" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from namespaces" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from namespaces" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from namespaces" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from namespaces" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from namespaces" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from namespaces" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from namespaces" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from namespaces" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from ls" -l limit -d 'Show at most this many items (in key order)' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from ls" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from ls" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from ls" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from ls" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from ls" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from ls" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from ls" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from ls" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from ls" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from get" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from get" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from get" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from get" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from get" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from get" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from get" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from get" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from get" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from rm" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from rm" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from rm" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from rm" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from rm" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from rm" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from rm" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from rm" -s n -l dry-run -d 'Show what would be deleted and delete nothing'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from rm" -s y -l yes -d 'On a terminal, do not ask before deleting (the question is only asked when stdin and stdout are a terminal; never in a dry run, a pipe or cron)'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from rm" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from rm" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from sweep" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from sweep" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from sweep" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from sweep" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from sweep" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from sweep" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from sweep" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from sweep" -s n -l dry-run -d 'Show what would be deleted and delete nothing'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from sweep" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from sweep" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from help" -f -a "namespaces" -d 'Every namespace: items, bytes of their values, expired items (what a sweep would delete), newest update'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from help" -f -a "ls" -d 'The items of one namespace (exactly that one, not those below it): key, size, created, updated, expires'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from help" -f -a "get" -d 'One item\'s value as JSON (what `store.get(namespace, key).value` returns); an expired item is shown with a note on stderr'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from help" -f -a "rm" -d 'Delete a whole namespace\'s items, or some keys, and their vectors, as `store.delete` does, in one transaction'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from help" -f -a "sweep" -d 'Delete every expired item exactly as the store\'s own `sweep_ttl` decides (for cron: exit 0 when nothing is due)'
complete -c memctl -n "__fish_memctl_using_subcommand store; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c memctl -n "__fish_memctl_using_subcommand ttl" -l config -d 'The deployment\'s langgraph.json (its checkpointer.ttl and store.ttl are read; the rest is ignored)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand ttl" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand ttl" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand ttl" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand ttl" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand ttl" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand ttl" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand ttl" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand ttl" -s n -l dry-run -d 'Show what would be deleted and delete nothing'
complete -c memctl -n "__fish_memctl_using_subcommand ttl" -s y -l yes -d 'On a terminal, do not ask before the prune or gc part deletes (the question is only asked when stdin and stdout are a terminal; never in a dry run, a pipe or cron)'
complete -c memctl -n "__fish_memctl_using_subcommand ttl" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand ttl" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand completions" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand completions" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand completions" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand completions" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand completions" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand completions" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand completions" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand completions" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand man" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand man" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand man" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand man" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand man" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand man" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand man" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand man" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand man" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand browse" -s t -l thread -d 'Open on this thread\'s history instead of the threads list' -r
complete -c memctl -n "__fish_memctl_using_subcommand browse" -l db -d 'The checkpoint database: the file given to SqliteSaver, or PostgresSaver\'s connection string: a postgresql:// (postgres://) URL, SQLAlchemy\'s postgresql+psycopg:// or postgresql+psycopg2://, or libpq\'s keyword form (\'host=H port=P user=U password=PW dbname=D\'). Passwords are never printed (nor MEMCTL_DB\'s value in this help)' -r -F
complete -c memctl -n "__fish_memctl_using_subcommand browse" -l schema -d 'The PostgreSQL schema that holds the saver\'s tables, for a saver configured with one (LangGraph.js\'s `schema` option); the same as `?schema=NAME` in the URL, which must not name another. Default: the server\'s search_path, normally `public`, where PostgresSaver puts them. Refused with a SQLite file' -r
complete -c memctl -n "__fish_memctl_using_subcommand browse" -l format -d 'Output format: a table for people (the default, on a terminal and in a pipe alike), or JSON / JSON lines for scripts (`dump` is always JSON)' -r -f -a "table\t'Aligned table / readable text'
json\t'One JSON document'
jsonl\t'One JSON object per line'"
complete -c memctl -n "__fish_memctl_using_subcommand browse" -l ns -d 'Checkpoint namespace: \'\' is the root graph; subgraphs use \'node:task-id\'' -r
complete -c memctl -n "__fish_memctl_using_subcommand browse" -l busy-timeout -d 'How long to wait for a database locked by a live app, in milliseconds (at most 2147483647)' -r
complete -c memctl -n "__fish_memctl_using_subcommand browse" -l key-env -d 'The environment variable that holds the AES key of a database written with LangGraph\'s EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads). Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it' -r
complete -c memctl -n "__fish_memctl_using_subcommand browse" -l now -d 'The time to measure ages against (RFC 3339), for reproducible output' -r
complete -c memctl -n "__fish_memctl_using_subcommand browse" -s q -l quiet -d 'Print nothing but errors (for cron): the report is hidden; threads that failed or whose change did not take effect are still named on stderr, with why'
complete -c memctl -n "__fish_memctl_using_subcommand browse" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "threads" -d 'Work with threads (conversations)'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "history" -d 'List a thread\'s checkpoints, newest first'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "show" -d 'Show a thread\'s state the way a person reads a chat'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "dump" -d 'Print a thread\'s messages as LangChain\'s model_dump() dictionaries'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "diff" -d 'Show what changed between two checkpoints of a thread'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "tokens" -d 'Count a thread\'s tokens (per message), or every thread\'s (--all)'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "trim" -d 'Trim threads to their newest messages (appends a checkpoint, like update_state)'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "rm" -d 'Remove messages from a thread (appends a checkpoint; --purge also scrubs history)'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "summarize" -d 'Summarize the older messages of threads through a model endpoint (OpenAI-compatible)'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "find" -d 'Find the conversations that mention something (message text, tool calls, string state)'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "forget" -d 'Erase a person\'s data from the whole database, with proof: delete their threads (--thread, --meta) and scrub what --match matches from every other thread\'s history; then zero the freed space, search every byte for what was erased, and print a receipt'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "stats" -d 'What takes the space: file, WAL, free pages, largest threads, bytes per channel, orphans'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "prune" -d 'Delete whole threads: idle ones (--idle 30d) or named ones (--thread T)'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "gc" -d 'Delete old checkpoints inside threads, keeping each thread resumable as before'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "rekey" -d 'Re-encrypt every stored value: rotate the AES key, encrypt a plain database, or decrypt one (--decrypt). Rewrites rows in place, a short transaction at a time; run it again after an interruption to finish'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "copy" -d 'Copy a thread, whole or up to a checkpoint (a fork), to a new thread id in the same database or into another one (a SQLite file or a PostgreSQL URL; a file that does not exist is created in SqliteSaver\'s layout). The copy is written in one transaction, exactly as the target\'s saver would write it: every checkpoint of every namespace, the pending writes, the same checkpoint ids; encrypted rows as they are stored'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "store" -d 'The LangGraph Store (long-term memory: `store.put` items): list namespaces and items, read one, delete items, sweep expired ones. Reads never refresh a TTL'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "ttl" -d 'Apply the TTL policy a LangGraph deployment declares in its langgraph.json (checkpointer.ttl, store.ttl) to a self-hosted database, from cron: threads idle longer than default_ttl are pruned (strategy delete) or collected to their latest checkpoint (keep_latest), and the store\'s expired items are swept'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "completions" -d 'Print a shell completion script'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "man" -d 'Write man pages: memctl.1 and one page per command (memctl-threads-list.1, …)'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "browse" -d 'Browse threads, history, checkpoints and the Store in a full-screen terminal UI (read-only: actions are shown as memctl commands, never run)'
complete -c memctl -n "__fish_memctl_using_subcommand help; and not __fish_seen_subcommand_from threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy store ttl completions man browse help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c memctl -n "__fish_memctl_using_subcommand help; and __fish_seen_subcommand_from threads" -f -a "list" -d 'One row per thread: checkpoints, messages, last step, last update, size'
complete -c memctl -n "__fish_memctl_using_subcommand help; and __fish_seen_subcommand_from store" -f -a "namespaces" -d 'Every namespace: items, bytes of their values, expired items (what a sweep would delete), newest update'
complete -c memctl -n "__fish_memctl_using_subcommand help; and __fish_seen_subcommand_from store" -f -a "ls" -d 'The items of one namespace (exactly that one, not those below it): key, size, created, updated, expires'
complete -c memctl -n "__fish_memctl_using_subcommand help; and __fish_seen_subcommand_from store" -f -a "get" -d 'One item\'s value as JSON (what `store.get(namespace, key).value` returns); an expired item is shown with a note on stderr'
complete -c memctl -n "__fish_memctl_using_subcommand help; and __fish_seen_subcommand_from store" -f -a "rm" -d 'Delete a whole namespace\'s items, or some keys, and their vectors, as `store.delete` does, in one transaction'
complete -c memctl -n "__fish_memctl_using_subcommand help; and __fish_seen_subcommand_from store" -f -a "sweep" -d 'Delete every expired item exactly as the store\'s own `sweep_ttl` decides (for cron: exit 0 when nothing is due)'

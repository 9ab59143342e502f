# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_crowdvision_agent_global_optspecs
    string join \n config= claims= token= h/help V/version
end

function __fish_crowdvision_agent_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_crowdvision_agent_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_crowdvision_agent_using_subcommand
    set -l cmd (__fish_crowdvision_agent_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "ingest" -d 'Walk Markdown sources, chunk, embed and store them'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "chunk" -d 'Print the chunks files would produce, one JSON object a line with --json'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "search" -d 'Hybrid retrieval only, no LLM: ranked chunks with both ranks and the fused score'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "ask" -d 'Answer one question: text, citations, tool trace, usage, cost, decision'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "chat" -d 'Multi-turn conversation with history, the same loop as ask'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "eval" -d 'Golden-dataset evaluation: assertions, an LLM judge, xfail, repeats, model sweeps, reports'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "serve" -d 'Serve the HTTP API: POST /ask (JSON or SSE), GET /healthz, GET /readyz'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "tools" -d 'The tool registry: list the tools, or call one directly as the caller'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "mcp" -d 'Serve the tools and `ask` to an MCP host over stdio, as the caller of --claims/--token'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "sim" -d 'Simulate twin-service and sensor-service from a YAML fixture'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "db" -d 'Schema management for the configured store'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "doctor" -d 'The effective settings and where each came from, then a live check of the store, the provider, the embedder and the downstream services'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "history" -d 'The local log of ask and chat answers: list, show one, search (HISTORY=false: off)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "conversations" -d 'The caller\'s conversations kept in the store: list, show one, delete one (CONVERSATIONS=false: none are kept)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "man" -d 'Print a man page (roff): the command\'s, or one subcommand\'s'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ingest" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ingest" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ingest" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ingest" -l prune -d 'Delete stored documents whose sources were not found under the given paths'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ingest" -l dry-run -d 'Print what would change, per source, without writing'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ingest" -l require-permissions -d 'Refuse documents that declare no permissions (also REQUIRE_PERMISSIONS=true)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ingest" -l json -d 'Print the summary as JSON'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ingest" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ingest" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chunk" -l unit -d 'Override CHUNK_SIZE_UNIT' -r -f -a "tokens\t''
chars\t''"
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chunk" -l target -d 'Override CHUNK_TARGET' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chunk" -l max -d 'Override CHUNK_MAX' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chunk" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chunk" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chunk" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chunk" -l json -d 'One JSON object a line: source, ordinal, section, kind, tokens, text'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chunk" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chunk" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand search" -s k -l top-k -d 'How many results: 1 to 50 (default TOP_K_FINAL)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand search" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand search" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand search" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand search" -l json -d 'Print the results as JSON'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand search" -l explain -d 'Also print the plans and timings of the vector and keyword searches'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand search" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand search" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ask" -l model -d 'Answer with this model instead of ANSWER_MODEL (needs MODEL_OVERRIDE_MIN_ROLE)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ask" -l top-k -d 'Passages search_docs returns: 1 to 50 (default TOP_K_FINAL)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ask" -l server -d 'Ask a running `serve` at this URL (e.g. http://localhost:3000 or …/agent) instead of answering in this process' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ask" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ask" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ask" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ask" -l json -d 'Print the response object as JSON (with --stream: one JSON event a line, then `done`)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ask" -l stream -d 'Print the answer\'s text as it arrives'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ask" -s v -l verbose -d 'Also print the tool trace, usage and cost'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ask" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand ask" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chat" -l model -d 'Answer with this model instead of ANSWER_MODEL (needs MODEL_OVERRIDE_MIN_ROLE)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chat" -l top-k -d 'Passages search_docs returns (1 to 50; default TOP_K_FINAL)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chat" -l history -d 'Where typed lines are kept between sessions (default: in the user\'s data directory)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chat" -l server -d 'Chat with a running `serve` at this URL (e.g. http://localhost:3000 or …/agent) instead of answering in this process. The conversation is kept here and sent with each question' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chat" -l resume -d 'Go on with this conversation kept in the store (`conversations` lists them). Without it, a new conversation is kept from the first answer (CONVERSATIONS=false: none)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chat" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chat" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chat" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chat" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand chat" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l models -d 'Answer models to sweep, comma-separated (default: ANSWER_MODEL)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l judge-model -d 'The model that grades judge rubrics (default: JUDGE_MODEL, the dataset\'s judge_model, else a model of another family than the answer model)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l filter -d 'Only cases whose id matches (`*` wildcards) or that carry this tag; repeatable' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l repeat -d 'Runs of each case; a case that passes some runs and fails others is flaky' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l jobs -d 'Answers in flight at once' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l timeout -d 'Seconds one answer (with its grading) may take before the case is an ERROR' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l json -d 'Write the full report as JSON' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l junit -d 'Write JUnit XML for CI systems' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l markdown -d 'Write a Markdown summary (for a pull-request comment)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l baseline -d 'A previous --json report: print new failures, fixed cases and the pass-rate change' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l server -d 'Run against a running `serve` at this URL, each case as a development token minted with EVAL_JWT_SECRET for its `as:` caller' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l sim-fixture -d 'The fixture --sim serves [default: the built-in campus]' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l strict -d 'Also fail (exit 1) on XPASS: a case marked xfail that now passes'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -l sim -d 'Start the simulator in process and point the live-data tools at it'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -a "import-feedback" -d 'Write golden-case skeletons from the answers people rated (administrators): each complaint runs as XFAIL until the answer changes'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and not __fish_seen_subcommand_from import-feedback help" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and __fish_seen_subcommand_from import-feedback" -l since -d 'How far back: a count and a unit, `m`, `h`, `d` or `w` (e.g. 24h, 7d)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and __fish_seen_subcommand_from import-feedback" -l out -d 'The dataset file to write (YAML, as `eval` reads it)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and __fish_seen_subcommand_from import-feedback" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and __fish_seen_subcommand_from import-feedback" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and __fish_seen_subcommand_from import-feedback" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and __fish_seen_subcommand_from import-feedback" -l down -d 'Only thumbs-down (complaints); without it, every rating'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and __fish_seen_subcommand_from import-feedback" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and __fish_seen_subcommand_from import-feedback" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and __fish_seen_subcommand_from help" -f -a "import-feedback" -d 'Write golden-case skeletons from the answers people rated (administrators): each complaint runs as XFAIL until the answer changes'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand eval; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand serve" -l bind -d 'Address to listen on (default: BIND, 127.0.0.1:3000; 0.0.0.0:PORT for every interface)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand serve" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand serve" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand serve" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand serve" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand serve" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and not __fish_seen_subcommand_from list call help" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and not __fish_seen_subcommand_from list call help" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and not __fish_seen_subcommand_from list call help" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and not __fish_seen_subcommand_from list call help" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and not __fish_seen_subcommand_from list call help" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and not __fish_seen_subcommand_from list call help" -f -a "list" -d 'The tools, their descriptions and generated argument schemas'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and not __fish_seen_subcommand_from list call help" -f -a "call" -d 'Run one tool as the caller and print what the model would receive'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and not __fish_seen_subcommand_from list call help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and __fish_seen_subcommand_from list" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and __fish_seen_subcommand_from list" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and __fish_seen_subcommand_from list" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and __fish_seen_subcommand_from list" -l json -d 'Print the tools with their full argument schemas as JSON'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and __fish_seen_subcommand_from call" -l args -d 'The arguments as a JSON object' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and __fish_seen_subcommand_from call" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and __fish_seen_subcommand_from call" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and __fish_seen_subcommand_from call" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and __fish_seen_subcommand_from call" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and __fish_seen_subcommand_from call" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and __fish_seen_subcommand_from help" -f -a "list" -d 'The tools, their descriptions and generated argument schemas'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and __fish_seen_subcommand_from help" -f -a "call" -d 'Run one tool as the caller and print what the model would receive'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand tools; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand mcp" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand mcp" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand mcp" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand mcp" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand mcp" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand sim" -l fixture -d 'The world to serve: buildings, rooms, occupancy, sensors, readings [default: the built-in campus of datasets/sim/campus.yaml]' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand sim" -l bind -d 'Address to listen on' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand sim" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand sim" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand sim" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand sim" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand sim" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and not __fish_seen_subcommand_from migrate status reset help" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and not __fish_seen_subcommand_from migrate status reset help" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and not __fish_seen_subcommand_from migrate status reset help" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and not __fish_seen_subcommand_from migrate status reset help" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and not __fish_seen_subcommand_from migrate status reset help" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and not __fish_seen_subcommand_from migrate status reset help" -f -a "migrate" -d 'Apply pending migrations (creates the store when it does not exist)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and not __fish_seen_subcommand_from migrate status reset help" -f -a "status" -d 'Show migrations, the recorded embedding model and dimension, and counts'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and not __fish_seen_subcommand_from migrate status reset help" -f -a "reset" -d 'Drop every table the agent created, to rebuild with another embedding model or size'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and not __fish_seen_subcommand_from migrate status reset help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from migrate" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from migrate" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from migrate" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from migrate" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from migrate" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from status" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from status" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from status" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from status" -l json -d 'Print the status as JSON'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from status" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from reset" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from reset" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from reset" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from reset" -l yes -d 'Delete without asking (on a terminal, reset asks first; elsewhere --yes is needed)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from reset" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from reset" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "migrate" -d 'Apply pending migrations (creates the store when it does not exist)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "status" -d 'Show migrations, the recorded embedding model and dimension, and counts'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "reset" -d 'Drop every table the agent created, to rebuild with another embedding model or size'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand doctor" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand doctor" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand doctor" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand doctor" -l json -d 'Print the settings and checks as JSON'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand doctor" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and not __fish_seen_subcommand_from list show search help" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and not __fish_seen_subcommand_from list show search help" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and not __fish_seen_subcommand_from list show search help" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and not __fish_seen_subcommand_from list show search help" -l json -d 'Print entries as JSON, one object a line'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and not __fish_seen_subcommand_from list show search help" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and not __fish_seen_subcommand_from list show search help" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and not __fish_seen_subcommand_from list show search help" -f -a "list" -d 'The latest answers, oldest first (the default action)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and not __fish_seen_subcommand_from list show search help" -f -a "show" -d 'One answer in full: question, answer, decision, citations, model, tokens, cost, time'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and not __fish_seen_subcommand_from list show search help" -f -a "search" -d 'Answers whose question or answer holds this text (any case)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and not __fish_seen_subcommand_from list show search help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from list" -s n -l last -d 'How many of the latest answers' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from list" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from list" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from list" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from list" -l json -d 'Print entries as JSON, one object a line'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from show" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from show" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from show" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from show" -l json -d 'Print entries as JSON, one object a line'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from search" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from search" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from search" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from search" -l json -d 'Print entries as JSON, one object a line'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from search" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from search" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "list" -d 'The latest answers, oldest first (the default action)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "show" -d 'One answer in full: question, answer, decision, citations, model, tokens, cost, time'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "search" -d 'Answers whose question or answer holds this text (any case)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and not __fish_seen_subcommand_from list show delete help" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and not __fish_seen_subcommand_from list show delete help" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and not __fish_seen_subcommand_from list show delete help" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and not __fish_seen_subcommand_from list show delete help" -l json -d 'Print as JSON'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and not __fish_seen_subcommand_from list show delete help" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and not __fish_seen_subcommand_from list show delete help" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and not __fish_seen_subcommand_from list show delete help" -f -a "list" -d 'The caller\'s conversations, newest first (the default action)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and not __fish_seen_subcommand_from list show delete help" -f -a "show" -d 'One conversation with its turns'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and not __fish_seen_subcommand_from list show delete help" -f -a "delete" -d 'Deletes a conversation and its turns'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and not __fish_seen_subcommand_from list show delete help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from list" -s n -l last -d 'How many (1 to 100)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from list" -s q -l search -d 'Only those holding every word of this text in a question, an answer or the title' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from list" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from list" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from list" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from list" -l json -d 'Print as JSON'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from show" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from show" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from show" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from show" -l json -d 'Print as JSON'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from delete" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from delete" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from delete" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from delete" -l json -d 'Print as JSON'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from delete" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from delete" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from help" -f -a "list" -d 'The caller\'s conversations, newest first (the default action)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from help" -f -a "show" -d 'One conversation with its turns'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from help" -f -a "delete" -d 'Deletes a conversation and its turns'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand conversations; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand completions" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand completions" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand completions" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand completions" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand completions" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand man" -l config -d 'Optional settings file (YAML mapping of the environment variable names)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand man" -l claims -d 'Act as this caller: a file holding gateway claims (JSON, or its base64)' -r -F
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand man" -l token -d 'Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)' -r
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand man" -s h -l help -d 'Print help'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand man" -s V -l version -d 'Print version'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "ingest" -d 'Walk Markdown sources, chunk, embed and store them'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "chunk" -d 'Print the chunks files would produce, one JSON object a line with --json'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "search" -d 'Hybrid retrieval only, no LLM: ranked chunks with both ranks and the fused score'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "ask" -d 'Answer one question: text, citations, tool trace, usage, cost, decision'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "chat" -d 'Multi-turn conversation with history, the same loop as ask'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "eval" -d 'Golden-dataset evaluation: assertions, an LLM judge, xfail, repeats, model sweeps, reports'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "serve" -d 'Serve the HTTP API: POST /ask (JSON or SSE), GET /healthz, GET /readyz'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "tools" -d 'The tool registry: list the tools, or call one directly as the caller'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "mcp" -d 'Serve the tools and `ask` to an MCP host over stdio, as the caller of --claims/--token'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "sim" -d 'Simulate twin-service and sensor-service from a YAML fixture'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "db" -d 'Schema management for the configured store'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "doctor" -d 'The effective settings and where each came from, then a live check of the store, the provider, the embedder and the downstream services'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "history" -d 'The local log of ask and chat answers: list, show one, search (HISTORY=false: off)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "conversations" -d 'The caller\'s conversations kept in the store: list, show one, delete one (CONVERSATIONS=false: none are kept)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "completions" -d 'Print a shell completion script'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "man" -d 'Print a man page (roff): the command\'s, or one subcommand\'s'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and not __fish_seen_subcommand_from ingest chunk search ask chat eval serve tools mcp sim db doctor history conversations completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and __fish_seen_subcommand_from eval" -f -a "import-feedback" -d 'Write golden-case skeletons from the answers people rated (administrators): each complaint runs as XFAIL until the answer changes'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and __fish_seen_subcommand_from tools" -f -a "list" -d 'The tools, their descriptions and generated argument schemas'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and __fish_seen_subcommand_from tools" -f -a "call" -d 'Run one tool as the caller and print what the model would receive'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and __fish_seen_subcommand_from db" -f -a "migrate" -d 'Apply pending migrations (creates the store when it does not exist)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and __fish_seen_subcommand_from db" -f -a "status" -d 'Show migrations, the recorded embedding model and dimension, and counts'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and __fish_seen_subcommand_from db" -f -a "reset" -d 'Drop every table the agent created, to rebuild with another embedding model or size'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "list" -d 'The latest answers, oldest first (the default action)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "show" -d 'One answer in full: question, answer, decision, citations, model, tokens, cost, time'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "search" -d 'Answers whose question or answer holds this text (any case)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and __fish_seen_subcommand_from conversations" -f -a "list" -d 'The caller\'s conversations, newest first (the default action)'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and __fish_seen_subcommand_from conversations" -f -a "show" -d 'One conversation with its turns'
complete -c crowdvision-agent -n "__fish_crowdvision_agent_using_subcommand help; and __fish_seen_subcommand_from conversations" -f -a "delete" -d 'Deletes a conversation and its turns'

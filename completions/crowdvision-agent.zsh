#compdef crowdvision-agent

autoload -U is-at-least

_crowdvision-agent() {
    typeset -A opt_args
    typeset -a _arguments_options
    local ret=1

    if is-at-least 5.2; then
        _arguments_options=(-s -S -C)
    else
        _arguments_options=(-s -C)
    fi

    local context curcontext="$curcontext" state line
    _arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_crowdvision-agent_commands" \
"*::: :->crowdvision-agent" \
&& ret=0
    case $state in
    (crowdvision-agent)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-command-$line[1]:"
        case $line[1] in
            (ingest)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--prune[Delete stored documents whose sources were not found under the given paths]' \
'--dry-run[Print what would change, per source, without writing]' \
'--require-permissions[Refuse documents that declare no permissions (also REQUIRE_PERMISSIONS=true)]' \
'--json[Print the summary as JSON]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
'*::paths -- Files or folders of Markdown (.md, .markdown, .qmd, .qd):_files' \
&& ret=0
;;
(chunk)
_arguments "${_arguments_options[@]}" : \
'--unit=[Override CHUNK_SIZE_UNIT]:UNIT:(tokens chars)' \
'--target=[Override CHUNK_TARGET]:TARGET:_default' \
'--max=[Override CHUNK_MAX]:MAX:_default' \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--json[One JSON object a line\: source, ordinal, section, kind, tokens, text]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
'*::files -- Markdown files, or folders to search for them:_files' \
&& ret=0
;;
(search)
_arguments "${_arguments_options[@]}" : \
'-k+[How many results\: 1 to 50 (default TOP_K_FINAL)]:TOP_K:_default' \
'--top-k=[How many results\: 1 to 50 (default TOP_K_FINAL)]:TOP_K:_default' \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--json[Print the results as JSON]' \
'--explain[Also print the plans and timings of the vector and keyword searches]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
':query -- The question or keywords (not empty):_default' \
&& ret=0
;;
(ask)
_arguments "${_arguments_options[@]}" : \
'--model=[Answer with this model instead of ANSWER_MODEL (needs MODEL_OVERRIDE_MIN_ROLE)]:MODEL:_default' \
'--top-k=[Passages search_docs returns\: 1 to 50 (default TOP_K_FINAL)]:TOP_K:_default' \
'--server=[Ask a running \`serve\` at this URL (e.g. http\://localhost\:3000 or …/agent) instead of answering in this process]:URL:_default' \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--json[Print the response object as JSON (with --stream\: one JSON event a line, then \`done\`)]' \
'--stream[Print the answer'\''s text as it arrives]' \
'-v[Also print the tool trace, usage and cost]' \
'--verbose[Also print the tool trace, usage and cost]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
':question -- The question:_default' \
&& ret=0
;;
(chat)
_arguments "${_arguments_options[@]}" : \
'--model=[Answer with this model instead of ANSWER_MODEL (needs MODEL_OVERRIDE_MIN_ROLE)]:MODEL:_default' \
'--top-k=[Passages search_docs returns (1 to 50; default TOP_K_FINAL)]:TOP_K:_default' \
'--history=[Where typed lines are kept between sessions (default\: in the user'\''s data directory)]:FILE:_files' \
'--server=[Chat with a running \`serve\` at this URL (e.g. http\://localhost\:3000 or …/agent) instead of answering in this process. The conversation is kept here and sent with each question]:URL:_default' \
'(--server)--resume=[Go on with this conversation kept in the store (\`conversations\` lists them). Without it, a new conversation is kept from the first answer (CONVERSATIONS=false\: none)]:ID:_default' \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(eval)
_arguments "${_arguments_options[@]}" : \
'*--models=[Answer models to sweep, comma-separated (default\: ANSWER_MODEL)]:MODEL,...:_default' \
'--judge-model=[The model that grades judge rubrics (default\: JUDGE_MODEL, the dataset'\''s judge_model, else a model of another family than the answer model)]:MODEL:_default' \
'*--filter=[Only cases whose id matches (\`*\` wildcards) or that carry this tag; repeatable]:ID|TAG:_default' \
'--repeat=[Runs of each case; a case that passes some runs and fails others is flaky]:REPEAT:_default' \
'--jobs=[Answers in flight at once]:JOBS:_default' \
'--timeout=[Seconds one answer (with its grading) may take before the case is an ERROR]:SECONDS:_default' \
'--json=[Write the full report as JSON]:FILE:_files' \
'--junit=[Write JUnit XML for CI systems]:FILE:_files' \
'--markdown=[Write a Markdown summary (for a pull-request comment)]:FILE:_files' \
'--baseline=[A previous --json report\: print new failures, fixed cases and the pass-rate change]:FILE:_files' \
'--server=[Run against a running \`serve\` at this URL, each case as a development token minted with EVAL_JWT_SECRET for its \`as\:\` caller]:URL:_default' \
'--sim-fixture=[The fixture --sim serves \[default\: the built-in campus\]]:FILE:_files' \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--strict[Also fail (exit 1) on XPASS\: a case marked xfail that now passes]' \
'(--server)--sim[Start the simulator in process and point the live-data tools at it]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
':datasets -- Dataset files, or folders of them (*.yaml, *.yml):_files' \
":: :_crowdvision-agent__subcmd__eval_commands" \
"*::: :->eval" \
&& ret=0

    case $state in
    (eval)
        words=($line[2] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-eval-command-$line[2]:"
        case $line[2] in
            (import-feedback)
_arguments "${_arguments_options[@]}" : \
'--since=[How far back\: a count and a unit, \`m\`, \`h\`, \`d\` or \`w\` (e.g. 24h, 7d)]:WINDOW:_default' \
'--out=[The dataset file to write (YAML, as \`eval\` reads it)]:FILE:_files' \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--down[Only thumbs-down (complaints); without it, every rating]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_crowdvision-agent__subcmd__eval__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-eval-help-command-$line[1]:"
        case $line[1] in
            (import-feedback)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(serve)
_arguments "${_arguments_options[@]}" : \
'--bind=[Address to listen on (default\: BIND, 127.0.0.1\:3000; 0.0.0.0\:PORT for every interface)]:ADDR:_default' \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(tools)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_crowdvision-agent__subcmd__tools_commands" \
"*::: :->tools" \
&& ret=0

    case $state in
    (tools)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-tools-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--json[Print the tools with their full argument schemas as JSON]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(call)
_arguments "${_arguments_options[@]}" : \
'--args=[The arguments as a JSON object]:ARGS:_default' \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
':name -- The tool to run, as `tools list` names it (e.g. get_occupancy):_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_crowdvision-agent__subcmd__tools__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-tools-help-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(call)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(mcp)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(sim)
_arguments "${_arguments_options[@]}" : \
'--fixture=[The world to serve\: buildings, rooms, occupancy, sensors, readings \[default\: the built-in campus of datasets/sim/campus.yaml\]]:FILE:_files' \
'--bind=[Address to listen on]:ADDR:_default' \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(db)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_crowdvision-agent__subcmd__db_commands" \
"*::: :->db" \
&& ret=0

    case $state in
    (db)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-db-command-$line[1]:"
        case $line[1] in
            (migrate)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--json[Print the status as JSON]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(reset)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--yes[Delete without asking (on a terminal, reset asks first; elsewhere --yes is needed)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_crowdvision-agent__subcmd__db__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-db-help-command-$line[1]:"
        case $line[1] in
            (migrate)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(reset)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(doctor)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--json[Print the settings and checks as JSON]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(history)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--json[Print entries as JSON, one object a line]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_crowdvision-agent__subcmd__history_commands" \
"*::: :->history" \
&& ret=0

    case $state in
    (history)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-history-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
'-n+[How many of the latest answers]:LAST:_default' \
'--last=[How many of the latest answers]:LAST:_default' \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--json[Print entries as JSON, one object a line]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--json[Print entries as JSON, one object a line]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
':id -- The number `history list` gives it:_default' \
&& ret=0
;;
(search)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--json[Print entries as JSON, one object a line]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
':text -- The text to look for:_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_crowdvision-agent__subcmd__history__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-history-help-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(search)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(conversations)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--json[Print as JSON]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_crowdvision-agent__subcmd__conversations_commands" \
"*::: :->conversations" \
&& ret=0

    case $state in
    (conversations)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-conversations-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
'-n+[How many (1 to 100)]:LAST:_default' \
'--last=[How many (1 to 100)]:LAST:_default' \
'-q+[Only those holding every word of this text in a question, an answer or the title]:SEARCH:_default' \
'--search=[Only those holding every word of this text in a question, an answer or the title]:SEARCH:_default' \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--json[Print as JSON]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--json[Print as JSON]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
':id:_default' \
&& ret=0
;;
(delete)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'--json[Print as JSON]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
':id:_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_crowdvision-agent__subcmd__conversations__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-conversations-help-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(delete)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(completions)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
':shell -- The shell to complete for:(bash zsh fish elvish powershell)' \
&& ret=0
;;
(man)
_arguments "${_arguments_options[@]}" : \
'--config=[Optional settings file (YAML mapping of the environment variable names)]:FILE:_files' \
'--claims=[Act as this caller\: a file holding gateway claims (JSON, or its base64)]:FILE:_files' \
'--token=[Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET)]:JWT:_default' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
'::subcommand -- The subcommand whose page to print (its file is crowdvision-agent-NAME.1):_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_crowdvision-agent__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-help-command-$line[1]:"
        case $line[1] in
            (ingest)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(chunk)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(search)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(ask)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(chat)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(eval)
_arguments "${_arguments_options[@]}" : \
":: :_crowdvision-agent__subcmd__help__subcmd__eval_commands" \
"*::: :->eval" \
&& ret=0

    case $state in
    (eval)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-help-eval-command-$line[1]:"
        case $line[1] in
            (import-feedback)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(serve)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(tools)
_arguments "${_arguments_options[@]}" : \
":: :_crowdvision-agent__subcmd__help__subcmd__tools_commands" \
"*::: :->tools" \
&& ret=0

    case $state in
    (tools)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-help-tools-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(call)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(mcp)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(sim)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(db)
_arguments "${_arguments_options[@]}" : \
":: :_crowdvision-agent__subcmd__help__subcmd__db_commands" \
"*::: :->db" \
&& ret=0

    case $state in
    (db)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-help-db-command-$line[1]:"
        case $line[1] in
            (migrate)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(status)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(reset)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(doctor)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(history)
_arguments "${_arguments_options[@]}" : \
":: :_crowdvision-agent__subcmd__help__subcmd__history_commands" \
"*::: :->history" \
&& ret=0

    case $state in
    (history)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-help-history-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(search)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(conversations)
_arguments "${_arguments_options[@]}" : \
":: :_crowdvision-agent__subcmd__help__subcmd__conversations_commands" \
"*::: :->conversations" \
&& ret=0

    case $state in
    (conversations)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:crowdvision-agent-help-conversations-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(delete)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(completions)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(man)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
}

(( $+functions[_crowdvision-agent_commands] )) ||
_crowdvision-agent_commands() {
    local commands; commands=(
'ingest:Walk Markdown sources, chunk, embed and store them' \
'chunk:Print the chunks files would produce, one JSON object a line with --json' \
'search:Hybrid retrieval only, no LLM\: ranked chunks with both ranks and the fused score' \
'ask:Answer one question\: text, citations, tool trace, usage, cost, decision' \
'chat:Multi-turn conversation with history, the same loop as ask' \
'eval:Golden-dataset evaluation\: assertions, an LLM judge, xfail, repeats, model sweeps, reports' \
'serve:Serve the HTTP API\: POST /ask (JSON or SSE), GET /healthz, GET /readyz' \
'tools:The tool registry\: list the tools, or call one directly as the caller' \
'mcp:Serve the tools and \`ask\` to an MCP host over stdio, as the caller of --claims/--token' \
'sim:Simulate twin-service and sensor-service from a YAML fixture' \
'db:Schema management for the configured store' \
'doctor:The effective settings and where each came from, then a live check of the store, the provider, the embedder and the downstream services' \
'history:The local log of ask and chat answers\: list, show one, search (HISTORY=false\: off)' \
'conversations:The caller'\''s conversations kept in the store\: list, show one, delete one (CONVERSATIONS=false\: none are kept)' \
'completions:Print a shell completion script' \
'man:Print a man page (roff)\: the command'\''s, or one subcommand'\''s' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'crowdvision-agent commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__ask_commands] )) ||
_crowdvision-agent__subcmd__ask_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent ask commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__chat_commands] )) ||
_crowdvision-agent__subcmd__chat_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent chat commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__chunk_commands] )) ||
_crowdvision-agent__subcmd__chunk_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent chunk commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__completions_commands] )) ||
_crowdvision-agent__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent completions commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__conversations_commands] )) ||
_crowdvision-agent__subcmd__conversations_commands() {
    local commands; commands=(
'list:The caller'\''s conversations, newest first (the default action)' \
'show:One conversation with its turns' \
'delete:Deletes a conversation and its turns' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'crowdvision-agent conversations commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__conversations__subcmd__delete_commands] )) ||
_crowdvision-agent__subcmd__conversations__subcmd__delete_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent conversations delete commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__conversations__subcmd__help_commands] )) ||
_crowdvision-agent__subcmd__conversations__subcmd__help_commands() {
    local commands; commands=(
'list:The caller'\''s conversations, newest first (the default action)' \
'show:One conversation with its turns' \
'delete:Deletes a conversation and its turns' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'crowdvision-agent conversations help commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__conversations__subcmd__help__subcmd__delete_commands] )) ||
_crowdvision-agent__subcmd__conversations__subcmd__help__subcmd__delete_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent conversations help delete commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__conversations__subcmd__help__subcmd__help_commands] )) ||
_crowdvision-agent__subcmd__conversations__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent conversations help help commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__conversations__subcmd__help__subcmd__list_commands] )) ||
_crowdvision-agent__subcmd__conversations__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent conversations help list commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__conversations__subcmd__help__subcmd__show_commands] )) ||
_crowdvision-agent__subcmd__conversations__subcmd__help__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent conversations help show commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__conversations__subcmd__list_commands] )) ||
_crowdvision-agent__subcmd__conversations__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent conversations list commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__conversations__subcmd__show_commands] )) ||
_crowdvision-agent__subcmd__conversations__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent conversations show commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__db_commands] )) ||
_crowdvision-agent__subcmd__db_commands() {
    local commands; commands=(
'migrate:Apply pending migrations (creates the store when it does not exist)' \
'status:Show migrations, the recorded embedding model and dimension, and counts' \
'reset:Drop every table the agent created, to rebuild with another embedding model or size' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'crowdvision-agent db commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__db__subcmd__help_commands] )) ||
_crowdvision-agent__subcmd__db__subcmd__help_commands() {
    local commands; commands=(
'migrate:Apply pending migrations (creates the store when it does not exist)' \
'status:Show migrations, the recorded embedding model and dimension, and counts' \
'reset:Drop every table the agent created, to rebuild with another embedding model or size' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'crowdvision-agent db help commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__db__subcmd__help__subcmd__help_commands] )) ||
_crowdvision-agent__subcmd__db__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent db help help commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__db__subcmd__help__subcmd__migrate_commands] )) ||
_crowdvision-agent__subcmd__db__subcmd__help__subcmd__migrate_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent db help migrate commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__db__subcmd__help__subcmd__reset_commands] )) ||
_crowdvision-agent__subcmd__db__subcmd__help__subcmd__reset_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent db help reset commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__db__subcmd__help__subcmd__status_commands] )) ||
_crowdvision-agent__subcmd__db__subcmd__help__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent db help status commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__db__subcmd__migrate_commands] )) ||
_crowdvision-agent__subcmd__db__subcmd__migrate_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent db migrate commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__db__subcmd__reset_commands] )) ||
_crowdvision-agent__subcmd__db__subcmd__reset_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent db reset commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__db__subcmd__status_commands] )) ||
_crowdvision-agent__subcmd__db__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent db status commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__doctor_commands] )) ||
_crowdvision-agent__subcmd__doctor_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent doctor commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__eval_commands] )) ||
_crowdvision-agent__subcmd__eval_commands() {
    local commands; commands=(
'import-feedback:Write golden-case skeletons from the answers people rated (administrators)\: each complaint runs as XFAIL until the answer changes' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'crowdvision-agent eval commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__eval__subcmd__help_commands] )) ||
_crowdvision-agent__subcmd__eval__subcmd__help_commands() {
    local commands; commands=(
'import-feedback:Write golden-case skeletons from the answers people rated (administrators)\: each complaint runs as XFAIL until the answer changes' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'crowdvision-agent eval help commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__eval__subcmd__help__subcmd__help_commands] )) ||
_crowdvision-agent__subcmd__eval__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent eval help help commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__eval__subcmd__help__subcmd__import-feedback_commands] )) ||
_crowdvision-agent__subcmd__eval__subcmd__help__subcmd__import-feedback_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent eval help import-feedback commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__eval__subcmd__import-feedback_commands] )) ||
_crowdvision-agent__subcmd__eval__subcmd__import-feedback_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent eval import-feedback commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help_commands] )) ||
_crowdvision-agent__subcmd__help_commands() {
    local commands; commands=(
'ingest:Walk Markdown sources, chunk, embed and store them' \
'chunk:Print the chunks files would produce, one JSON object a line with --json' \
'search:Hybrid retrieval only, no LLM\: ranked chunks with both ranks and the fused score' \
'ask:Answer one question\: text, citations, tool trace, usage, cost, decision' \
'chat:Multi-turn conversation with history, the same loop as ask' \
'eval:Golden-dataset evaluation\: assertions, an LLM judge, xfail, repeats, model sweeps, reports' \
'serve:Serve the HTTP API\: POST /ask (JSON or SSE), GET /healthz, GET /readyz' \
'tools:The tool registry\: list the tools, or call one directly as the caller' \
'mcp:Serve the tools and \`ask\` to an MCP host over stdio, as the caller of --claims/--token' \
'sim:Simulate twin-service and sensor-service from a YAML fixture' \
'db:Schema management for the configured store' \
'doctor:The effective settings and where each came from, then a live check of the store, the provider, the embedder and the downstream services' \
'history:The local log of ask and chat answers\: list, show one, search (HISTORY=false\: off)' \
'conversations:The caller'\''s conversations kept in the store\: list, show one, delete one (CONVERSATIONS=false\: none are kept)' \
'completions:Print a shell completion script' \
'man:Print a man page (roff)\: the command'\''s, or one subcommand'\''s' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'crowdvision-agent help commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__ask_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__ask_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help ask commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__chat_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__chat_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help chat commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__chunk_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__chunk_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help chunk commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__completions_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help completions commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__conversations_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__conversations_commands() {
    local commands; commands=(
'list:The caller'\''s conversations, newest first (the default action)' \
'show:One conversation with its turns' \
'delete:Deletes a conversation and its turns' \
    )
    _describe -t commands 'crowdvision-agent help conversations commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__conversations__subcmd__delete_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__conversations__subcmd__delete_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help conversations delete commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__conversations__subcmd__list_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__conversations__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help conversations list commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__conversations__subcmd__show_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__conversations__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help conversations show commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__db_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__db_commands() {
    local commands; commands=(
'migrate:Apply pending migrations (creates the store when it does not exist)' \
'status:Show migrations, the recorded embedding model and dimension, and counts' \
'reset:Drop every table the agent created, to rebuild with another embedding model or size' \
    )
    _describe -t commands 'crowdvision-agent help db commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__db__subcmd__migrate_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__db__subcmd__migrate_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help db migrate commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__db__subcmd__reset_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__db__subcmd__reset_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help db reset commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__db__subcmd__status_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__db__subcmd__status_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help db status commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__doctor_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__doctor_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help doctor commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__eval_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__eval_commands() {
    local commands; commands=(
'import-feedback:Write golden-case skeletons from the answers people rated (administrators)\: each complaint runs as XFAIL until the answer changes' \
    )
    _describe -t commands 'crowdvision-agent help eval commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__eval__subcmd__import-feedback_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__eval__subcmd__import-feedback_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help eval import-feedback commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__help_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help help commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__history_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__history_commands() {
    local commands; commands=(
'list:The latest answers, oldest first (the default action)' \
'show:One answer in full\: question, answer, decision, citations, model, tokens, cost, time' \
'search:Answers whose question or answer holds this text (any case)' \
    )
    _describe -t commands 'crowdvision-agent help history commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__history__subcmd__list_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__history__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help history list commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__history__subcmd__search_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__history__subcmd__search_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help history search commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__history__subcmd__show_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__history__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help history show commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__ingest_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__ingest_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help ingest commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__man_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__man_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help man commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__mcp_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__mcp_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help mcp commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__search_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__search_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help search commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__serve_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__serve_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help serve commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__sim_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__sim_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help sim commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__tools_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__tools_commands() {
    local commands; commands=(
'list:The tools, their descriptions and generated argument schemas' \
'call:Run one tool as the caller and print what the model would receive' \
    )
    _describe -t commands 'crowdvision-agent help tools commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__tools__subcmd__call_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__tools__subcmd__call_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help tools call commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__help__subcmd__tools__subcmd__list_commands] )) ||
_crowdvision-agent__subcmd__help__subcmd__tools__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent help tools list commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__history_commands] )) ||
_crowdvision-agent__subcmd__history_commands() {
    local commands; commands=(
'list:The latest answers, oldest first (the default action)' \
'show:One answer in full\: question, answer, decision, citations, model, tokens, cost, time' \
'search:Answers whose question or answer holds this text (any case)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'crowdvision-agent history commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__history__subcmd__help_commands] )) ||
_crowdvision-agent__subcmd__history__subcmd__help_commands() {
    local commands; commands=(
'list:The latest answers, oldest first (the default action)' \
'show:One answer in full\: question, answer, decision, citations, model, tokens, cost, time' \
'search:Answers whose question or answer holds this text (any case)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'crowdvision-agent history help commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__history__subcmd__help__subcmd__help_commands] )) ||
_crowdvision-agent__subcmd__history__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent history help help commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__history__subcmd__help__subcmd__list_commands] )) ||
_crowdvision-agent__subcmd__history__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent history help list commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__history__subcmd__help__subcmd__search_commands] )) ||
_crowdvision-agent__subcmd__history__subcmd__help__subcmd__search_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent history help search commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__history__subcmd__help__subcmd__show_commands] )) ||
_crowdvision-agent__subcmd__history__subcmd__help__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent history help show commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__history__subcmd__list_commands] )) ||
_crowdvision-agent__subcmd__history__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent history list commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__history__subcmd__search_commands] )) ||
_crowdvision-agent__subcmd__history__subcmd__search_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent history search commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__history__subcmd__show_commands] )) ||
_crowdvision-agent__subcmd__history__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent history show commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__ingest_commands] )) ||
_crowdvision-agent__subcmd__ingest_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent ingest commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__man_commands] )) ||
_crowdvision-agent__subcmd__man_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent man commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__mcp_commands] )) ||
_crowdvision-agent__subcmd__mcp_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent mcp commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__search_commands] )) ||
_crowdvision-agent__subcmd__search_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent search commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__serve_commands] )) ||
_crowdvision-agent__subcmd__serve_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent serve commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__sim_commands] )) ||
_crowdvision-agent__subcmd__sim_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent sim commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__tools_commands] )) ||
_crowdvision-agent__subcmd__tools_commands() {
    local commands; commands=(
'list:The tools, their descriptions and generated argument schemas' \
'call:Run one tool as the caller and print what the model would receive' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'crowdvision-agent tools commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__tools__subcmd__call_commands] )) ||
_crowdvision-agent__subcmd__tools__subcmd__call_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent tools call commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__tools__subcmd__help_commands] )) ||
_crowdvision-agent__subcmd__tools__subcmd__help_commands() {
    local commands; commands=(
'list:The tools, their descriptions and generated argument schemas' \
'call:Run one tool as the caller and print what the model would receive' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'crowdvision-agent tools help commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__tools__subcmd__help__subcmd__call_commands] )) ||
_crowdvision-agent__subcmd__tools__subcmd__help__subcmd__call_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent tools help call commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__tools__subcmd__help__subcmd__help_commands] )) ||
_crowdvision-agent__subcmd__tools__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent tools help help commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__tools__subcmd__help__subcmd__list_commands] )) ||
_crowdvision-agent__subcmd__tools__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent tools help list commands' commands "$@"
}
(( $+functions[_crowdvision-agent__subcmd__tools__subcmd__list_commands] )) ||
_crowdvision-agent__subcmd__tools__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'crowdvision-agent tools list commands' commands "$@"
}

if [ "$funcstack[1]" = "_crowdvision-agent" ]; then
    _crowdvision-agent "$@"
else
    compdef _crowdvision-agent crowdvision-agent
fi

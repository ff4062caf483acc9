_memctl() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="memctl"
                ;;
            memctl,browse)
                cmd="memctl__subcmd__browse"
                ;;
            memctl,completions)
                cmd="memctl__subcmd__completions"
                ;;
            memctl,copy)
                cmd="memctl__subcmd__copy"
                ;;
            memctl,diff)
                cmd="memctl__subcmd__diff"
                ;;
            memctl,dump)
                cmd="memctl__subcmd__dump"
                ;;
            memctl,export)
                cmd="memctl__subcmd__export"
                ;;
            memctl,find)
                cmd="memctl__subcmd__find"
                ;;
            memctl,forget)
                cmd="memctl__subcmd__forget"
                ;;
            memctl,gc)
                cmd="memctl__subcmd__gc"
                ;;
            memctl,help)
                cmd="memctl__subcmd__help"
                ;;
            memctl,history)
                cmd="memctl__subcmd__history"
                ;;
            memctl,import)
                cmd="memctl__subcmd__import"
                ;;
            memctl,man)
                cmd="memctl__subcmd__man"
                ;;
            memctl,migrate)
                cmd="memctl__subcmd__migrate"
                ;;
            memctl,prune)
                cmd="memctl__subcmd__prune"
                ;;
            memctl,rekey)
                cmd="memctl__subcmd__rekey"
                ;;
            memctl,rm)
                cmd="memctl__subcmd__rm"
                ;;
            memctl,show)
                cmd="memctl__subcmd__show"
                ;;
            memctl,stats)
                cmd="memctl__subcmd__stats"
                ;;
            memctl,store)
                cmd="memctl__subcmd__store"
                ;;
            memctl,summarize)
                cmd="memctl__subcmd__summarize"
                ;;
            memctl,threads)
                cmd="memctl__subcmd__threads"
                ;;
            memctl,tokens)
                cmd="memctl__subcmd__tokens"
                ;;
            memctl,trim)
                cmd="memctl__subcmd__trim"
                ;;
            memctl,ttl)
                cmd="memctl__subcmd__ttl"
                ;;
            memctl__subcmd__help,browse)
                cmd="memctl__subcmd__help__subcmd__browse"
                ;;
            memctl__subcmd__help,completions)
                cmd="memctl__subcmd__help__subcmd__completions"
                ;;
            memctl__subcmd__help,copy)
                cmd="memctl__subcmd__help__subcmd__copy"
                ;;
            memctl__subcmd__help,diff)
                cmd="memctl__subcmd__help__subcmd__diff"
                ;;
            memctl__subcmd__help,dump)
                cmd="memctl__subcmd__help__subcmd__dump"
                ;;
            memctl__subcmd__help,export)
                cmd="memctl__subcmd__help__subcmd__export"
                ;;
            memctl__subcmd__help,find)
                cmd="memctl__subcmd__help__subcmd__find"
                ;;
            memctl__subcmd__help,forget)
                cmd="memctl__subcmd__help__subcmd__forget"
                ;;
            memctl__subcmd__help,gc)
                cmd="memctl__subcmd__help__subcmd__gc"
                ;;
            memctl__subcmd__help,help)
                cmd="memctl__subcmd__help__subcmd__help"
                ;;
            memctl__subcmd__help,history)
                cmd="memctl__subcmd__help__subcmd__history"
                ;;
            memctl__subcmd__help,import)
                cmd="memctl__subcmd__help__subcmd__import"
                ;;
            memctl__subcmd__help,man)
                cmd="memctl__subcmd__help__subcmd__man"
                ;;
            memctl__subcmd__help,migrate)
                cmd="memctl__subcmd__help__subcmd__migrate"
                ;;
            memctl__subcmd__help,prune)
                cmd="memctl__subcmd__help__subcmd__prune"
                ;;
            memctl__subcmd__help,rekey)
                cmd="memctl__subcmd__help__subcmd__rekey"
                ;;
            memctl__subcmd__help,rm)
                cmd="memctl__subcmd__help__subcmd__rm"
                ;;
            memctl__subcmd__help,show)
                cmd="memctl__subcmd__help__subcmd__show"
                ;;
            memctl__subcmd__help,stats)
                cmd="memctl__subcmd__help__subcmd__stats"
                ;;
            memctl__subcmd__help,store)
                cmd="memctl__subcmd__help__subcmd__store"
                ;;
            memctl__subcmd__help,summarize)
                cmd="memctl__subcmd__help__subcmd__summarize"
                ;;
            memctl__subcmd__help,threads)
                cmd="memctl__subcmd__help__subcmd__threads"
                ;;
            memctl__subcmd__help,tokens)
                cmd="memctl__subcmd__help__subcmd__tokens"
                ;;
            memctl__subcmd__help,trim)
                cmd="memctl__subcmd__help__subcmd__trim"
                ;;
            memctl__subcmd__help,ttl)
                cmd="memctl__subcmd__help__subcmd__ttl"
                ;;
            memctl__subcmd__help__subcmd__store,get)
                cmd="memctl__subcmd__help__subcmd__store__subcmd__get"
                ;;
            memctl__subcmd__help__subcmd__store,ls)
                cmd="memctl__subcmd__help__subcmd__store__subcmd__ls"
                ;;
            memctl__subcmd__help__subcmd__store,namespaces)
                cmd="memctl__subcmd__help__subcmd__store__subcmd__namespaces"
                ;;
            memctl__subcmd__help__subcmd__store,rm)
                cmd="memctl__subcmd__help__subcmd__store__subcmd__rm"
                ;;
            memctl__subcmd__help__subcmd__store,sweep)
                cmd="memctl__subcmd__help__subcmd__store__subcmd__sweep"
                ;;
            memctl__subcmd__help__subcmd__threads,list)
                cmd="memctl__subcmd__help__subcmd__threads__subcmd__list"
                ;;
            memctl__subcmd__store,get)
                cmd="memctl__subcmd__store__subcmd__get"
                ;;
            memctl__subcmd__store,help)
                cmd="memctl__subcmd__store__subcmd__help"
                ;;
            memctl__subcmd__store,ls)
                cmd="memctl__subcmd__store__subcmd__ls"
                ;;
            memctl__subcmd__store,namespaces)
                cmd="memctl__subcmd__store__subcmd__namespaces"
                ;;
            memctl__subcmd__store,rm)
                cmd="memctl__subcmd__store__subcmd__rm"
                ;;
            memctl__subcmd__store,sweep)
                cmd="memctl__subcmd__store__subcmd__sweep"
                ;;
            memctl__subcmd__store__subcmd__help,get)
                cmd="memctl__subcmd__store__subcmd__help__subcmd__get"
                ;;
            memctl__subcmd__store__subcmd__help,help)
                cmd="memctl__subcmd__store__subcmd__help__subcmd__help"
                ;;
            memctl__subcmd__store__subcmd__help,ls)
                cmd="memctl__subcmd__store__subcmd__help__subcmd__ls"
                ;;
            memctl__subcmd__store__subcmd__help,namespaces)
                cmd="memctl__subcmd__store__subcmd__help__subcmd__namespaces"
                ;;
            memctl__subcmd__store__subcmd__help,rm)
                cmd="memctl__subcmd__store__subcmd__help__subcmd__rm"
                ;;
            memctl__subcmd__store__subcmd__help,sweep)
                cmd="memctl__subcmd__store__subcmd__help__subcmd__sweep"
                ;;
            memctl__subcmd__threads,help)
                cmd="memctl__subcmd__threads__subcmd__help"
                ;;
            memctl__subcmd__threads,list)
                cmd="memctl__subcmd__threads__subcmd__list"
                ;;
            memctl__subcmd__threads__subcmd__help,help)
                cmd="memctl__subcmd__threads__subcmd__help__subcmd__help"
                ;;
            memctl__subcmd__threads__subcmd__help,list)
                cmd="memctl__subcmd__threads__subcmd__help__subcmd__list"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        memctl)
            opts="-q -h -V --db --schema --format --ns --busy-timeout --key-env --quiet --now --help --version threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy export import migrate store ttl completions man browse help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__browse)
            opts="-t -q -h --thread --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__completions)
            opts="-q -h --db --schema --format --ns --busy-timeout --key-env --quiet --now --help bash elvish fish powershell zsh"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__copy)
            opts="-n -q -h --thread --all --idle --meta --to-thread --to --at --replace --dry-run --materialize --new-key-env --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --idle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --meta)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to-thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --at)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --new-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__diff)
            opts="-t -q -h --thread --from --to --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__dump)
            opts="-t -q -h --thread --checkpoint --raw --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --checkpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__export)
            opts="-o -q -h --thread --all --output --force --redact --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --redact)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__find)
            opts="-e -i -t -q -h --regex --ignore-case --meta --history --thread --count --jobs --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --meta)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__forget)
            opts="-t -e -i -y -n -q -h --thread --meta --match --regex --ignore-case --receipt --yes --dry-run --force --settle --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --meta)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --match)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --receipt)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --settle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__gc)
            opts="-t -n -y -q -h --thread --all --keep-checkpoints --min-idle --dry-run --yes --vacuum --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --keep-checkpoints)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-idle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help)
            opts="threads history show dump diff tokens trim rm summarize find forget stats prune gc rekey copy export import migrate store ttl completions man browse help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__browse)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__completions)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__copy)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__diff)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__dump)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__export)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__find)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__forget)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__gc)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__history)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__import)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__man)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__migrate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__prune)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__rekey)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__rm)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__show)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__stats)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__store)
            opts="namespaces ls get rm sweep"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__store__subcmd__get)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__store__subcmd__ls)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__store__subcmd__namespaces)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__store__subcmd__rm)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__store__subcmd__sweep)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__summarize)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__threads)
            opts="list"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__threads__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__tokens)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__trim)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__help__subcmd__ttl)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__history)
            opts="-t -q -h --thread --limit --source --before --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --source)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --before)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__import)
            opts="-n -q -h --thread --to-thread --replace --dry-run --materialize --new-key-env --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to-thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --new-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__man)
            opts="-q -h --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__migrate)
            opts="-n -q -h --to --replace --dry-run --without-vectors --materialize --new-key-env --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --new-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__prune)
            opts="-t -n -y -q -h --idle --thread --batch --min-idle --dry-run --yes --vacuum --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --idle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --batch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-idle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__rekey)
            opts="-n -y -q -h --old-key-env --new-key-env --decrypt --dry-run --yes --batch --vacuum --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --old-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --new-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --batch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__rm)
            opts="-t -y -n -q -h --thread --id --index --type --match --all-messages --purge --yes --dry-run --force --settle --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --index)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --type)
                    COMPREPLY=($(compgen -W "human ai tool system" -- "${cur}"))
                    return 0
                    ;;
                --match)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --settle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__show)
            opts="-t -q -h --thread --checkpoint --last --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --checkpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --last)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__stats)
            opts="-q -h --top --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --top)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__store)
            opts="-q -h --db --schema --format --ns --busy-timeout --key-env --quiet --now --help namespaces ls get rm sweep help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__store__subcmd__get)
            opts="-q -h --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__store__subcmd__help)
            opts="namespaces ls get rm sweep help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__store__subcmd__help__subcmd__get)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__store__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__store__subcmd__help__subcmd__ls)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__store__subcmd__help__subcmd__namespaces)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__store__subcmd__help__subcmd__rm)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__store__subcmd__help__subcmd__sweep)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__store__subcmd__ls)
            opts="-q -h --limit --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__store__subcmd__namespaces)
            opts="-q -h --prefix --max-depth --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --prefix)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-depth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__store__subcmd__rm)
            opts="-n -y -q -h --dry-run --yes --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__store__subcmd__sweep)
            opts="-n -q -h --dry-run --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__summarize)
            opts="-t -n -q -h --thread --all --idle --min-messages --min-tokens --keep --keep-tokens --counter --endpoint --model --api-key-env --concurrency --timeout --retries --max-input-tokens --prompt-file --summary-key --new-key --dry-run --force --settle --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --idle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-messages)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --keep)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --keep-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --counter)
                    COMPREPLY=($(compgen -W "approx o200k cl100k usage" -- "${cur}"))
                    return 0
                    ;;
                --endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --api-key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --concurrency)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-input-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prompt-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summary-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --settle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__threads)
            opts="-q -h --sort --limit --min-tokens --meta --jobs --db --schema --format --ns --busy-timeout --key-env --quiet --now --help list help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --sort)
                    COMPREPLY=($(compgen -W "updated size messages checkpoints tokens thread" -- "${cur}"))
                    return 0
                    ;;
                --limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --meta)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__threads__subcmd__help)
            opts="list help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__threads__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__threads__subcmd__help__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__threads__subcmd__list)
            opts="-q -h --sort --limit --min-tokens --meta --jobs --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --sort)
                    COMPREPLY=($(compgen -W "updated size messages checkpoints tokens thread" -- "${cur}"))
                    return 0
                    ;;
                --limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --meta)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__tokens)
            opts="-t -q -h --thread --all --limit --sort --jobs --counter --model --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sort)
                    COMPREPLY=($(compgen -W "tokens thread" -- "${cur}"))
                    return 0
                    ;;
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --counter)
                    COMPREPLY=($(compgen -W "approx o200k cl100k usage" -- "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__trim)
            opts="-t -n -q -h --thread --all --idle --min-messages --keep --max-tokens --counter --model --keep-first --dry-run --force --settle --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --thread)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --idle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-messages)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --keep)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --counter)
                    COMPREPLY=($(compgen -W "approx o200k cl100k usage" -- "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --settle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        memctl__subcmd__ttl)
            opts="-n -y -q -h --config --dry-run --yes --db --schema --format --ns --busy-timeout --key-env --quiet --now --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --db)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json jsonl" -- "${cur}"))
                    return 0
                    ;;
                --ns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --busy-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --now)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _memctl -o nosort -o bashdefault -o default memctl
else
    complete -F _memctl -o bashdefault -o default memctl
fi

gitops-lint .                                  # lint everything
gitops-lint diff --base origin/main .          # what this branch adds, fixes and changes
gitops-lint --fix --dry-run .                  # the safe fixes as a patch
gitops-lint --fix .                            # apply them, then report what remains
gitops-lint --write-baseline .gitops-lint-baseline.json .
gitops-lint --baseline .gitops-lint-baseline.json .   # only findings not in the baseline
gitops-lint --changed $(git diff --name-only origin/main)   # only the apps those files feed
gitops-lint completions bash > ~/.local/share/bash-completion/completions/gitops-lint

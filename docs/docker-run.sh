docker run --rm -v "$PWD:/repo" ghcr.io/gitops-lint/gitops-lint:v0 --format junit --comment off . > gitops-lint.xml

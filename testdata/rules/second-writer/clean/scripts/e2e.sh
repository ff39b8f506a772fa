#!/usr/bin/env bash
# End-to-end tests against a throwaway cluster.
set -euo pipefail
kind create cluster --name e2e
kubectl apply -f apps/web
kubectl -n default scale deployment/web --replicas=1

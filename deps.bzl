load("@bazel_gazelle//:deps.bzl", "go_repository")

def go_dependencies():
    pass

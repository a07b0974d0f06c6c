module github.com/mcpipe/mcpipe

go 1.26


module github.com/latticenet/lattice

go 1.26.8

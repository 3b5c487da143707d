" *.tl is Teal to Vim by default; tilet's files are tile.
autocmd BufRead,BufNewFile *.tl set filetype=tile

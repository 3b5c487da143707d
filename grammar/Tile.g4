// Tile.g4 -- the grammar of the tilet tile language.
//
// docs/language.md is the normative description; this file is its syntax.
// Reserved words are the structural keywords, loop kinds, dtypes and every
// builtin (allocations, tile operations, synchronisation, math). Builtins are
// tokens so that a user name can never shadow one and so that editor grammars
// can be checked against this file (tests/scripts/check_editor_keywords.py).
// Hint values such as `tma` or `FullRow` are plain identifiers; the checker
// interprets them by the keyword argument they are given to.
//
// Nothing past src/frontend/ParseTreeToAst.cpp sees the parse tree.
grammar Tile;

// ---------------------------------------------------------------- file level

file
    : topDecl* EOF
    ;

topDecl
    : importDecl
    | targetDecl
    | constDecl
    | fnDecl
    | kernelDecl
    ;

importDecl
    : IMPORT STRING SEMI
    ;

targetDecl
    : TARGET IDENT SEMI
    ;

constDecl
    : CONST IDENT (COLON typeRef)? ASSIGN expr SEMI
    ;

// An inline function (TileLang's T.macro): its body is checked and inlined
// at each call statement, its parameters bound to the call's arguments.
fnDecl
    : FN IDENT LPAREN identList? RPAREN block
    ;

kernelDecl
    : KERNEL IDENT LPAREN paramList? RPAREN launchClause* block
    ;

paramList
    : param (COMMA param)* COMMA?
    ;

param
    : IDENT COLON typeRef (LBRACK dimList RBRACK)?
    ;

dimList
    : dim (COMMA dim)*
    ;

dim
    : DYN IDENT (PERCENT expr)?   # DynDim
    | expr                        # ExprDim
    ;

launchClause
    : GRID LPAREN exprList RPAREN (AS LPAREN identList RPAREN)?   # GridClause
    | THREADS LPAREN exprList RPAREN (AS LPAREN identList RPAREN)? # ThreadsClause
    | CLUSTER LPAREN exprList RPAREN                              # ClusterClause
    | MIN_BLOCKS_PER_SM LPAREN expr RPAREN                        # MinBlocksClause
    ;

// ---------------------------------------------------------------- statements

block
    : LBRACE stmt* RBRACE
    ;

// An assignment and a call statement both start with an expression; the
// AST builder checks that an assigned expression is a name or an element.
// (Parsing them apart here would need unbounded lookahead past A[i, j].)
stmt
    : LET IDENT (COLON typeRef)? ASSIGN expr SEMI                 # LetStmt
    | VAR IDENT COLON typeRef (ASSIGN expr)? SEMI                 # VarStmt
    | FOR identList IN loopKind LPAREN argList? RPAREN block      # ForStmt
    | ifStmt                                                      # IfStmtAlt
    | WHILE LPAREN expr RPAREN block                              # WhileStmt
    | WS LPAREN exprList RPAREN block                             # WsStmt
    | BREAK SEMI                                                  # BreakStmt
    | CONTINUE SEMI                                               # ContinueStmt
    | expr (assignOp expr)? SEMI                                  # ExprStmt
    ;

ifStmt
    : IF LPAREN expr RPAREN block (ELSE (ifStmt | block))?
    ;

assignOp
    : ASSIGN | PLUS_ASSIGN | MINUS_ASSIGN | STAR_ASSIGN | SLASH_ASSIGN
    ;

loopKind
    : SERIAL | UNROLL | PARALLEL | PIPELINED | VECTORIZED | PERSISTENT
    ;

// ---------------------------------------------------------------- expressions

// Binary operators are parsed as a flat list and grouped by precedence in
// ParseTreeToAst.cpp (precedence climbing), which keeps every decision of the
// parser LL(1): the precedence table is in docs/language.md section 7.
expr
    : binaryExpr (QUESTION expr COLON expr)?
    ;

binaryExpr
    : unaryExpr (binaryOp unaryExpr)*
    ;

binaryOp
    : STAR | SLASH | PERCENT | PLUS | MINUS | SHL | SHR | LT | LE | GT | GE
    | EQ | NE | AMP | CARET | PIPE | AND | OR
    ;

unaryExpr
    : op=(MINUS | NOT | TILDE) unaryExpr
    | powerExpr
    ;

// `a ** b` binds tighter than a unary operator on its left and groups to
// the right, as in Python: -x ** 2 is -(x ** 2), 2 ** -1 and a ** b ** c
// are 2 ** (-1) and a ** (b ** c).
powerExpr
    : postfixExpr (STARSTAR unaryExpr)?
    ;

postfixExpr
    : primary (LBRACK indexList RBRACK)*
    ;

primary
    : INT                                                         # IntLit
    | FLOAT                                                       # FloatLit
    | TRUE                                                        # TrueLit
    | FALSE                                                       # FalseLit
    | INF                                                         # InfLit
    | STRING                                                      # StringLit
    | call                                                        # CallPrimary
    | IDENT                                                       # NamePrimary
    | dtype                                                       # DTypePrimary
    | LPAREN expr RPAREN                                          # ParenPrimary
    | LBRACK exprList? RBRACK                                     # ListPrimary
    ;

indexList
    : indexItem (COMMA indexItem)*
    ;

// `a:b`, and Python's open forms `:b`, `a:` and `:` (from 0, to the end).
indexItem
    : expr (COLON expr?)?
    | COLON expr?
    ;

call
    : callee LPAREN argList? RPAREN
    ;

callee
    : builtin
    | IDENT
    ;

argList
    : arg (COMMA arg)* COMMA?
    ;

// `op = max` (alloc_reducer) names a builtin without calling it.
arg
    : (argName ASSIGN)? expr
    | argName ASSIGN (MIN | MAX)
    ;

// `clear = false` (reductions) names an argument after a keyword.
argName
    : IDENT | CLEAR
    ;

exprList
    : expr (COMMA expr)* COMMA?
    ;

identList
    : IDENT (COMMA IDENT)*
    ;

// A type annotation: a dtype, or the name of a dtype constant (`const dt = f16;`).
typeRef
    : dtype
    | IDENT
    ;

dtype
    : BOOL | INT4 | INT8 | INT16 | INT32 | INT64 | UINT4 | UINT8 | UINT16 | UINT32 | UINT64
    | F16 | BF16 | F32 | F64 | TF32 | F8E4M3 | F8E5M2 | F6E2M3 | F6E3M2
    | F4E2M1 | F4E2M1_UNPACKED | F6E2M3_UNPACKED | F6E3M2_UNPACKED | E8M0
    ;

builtin
    : allocBuiltin | tileOpBuiltin | syncBuiltin | exprBuiltin
    ;

allocBuiltin
    : ALLOC_SHARED | ALLOC_FRAGMENT | ALLOC_LOCAL | ALLOC_TMEM | ALLOC_BARRIER | ALLOC_CLUSTER_BARRIER | ALLOC_REDUCER | TENSOR | RESHAPE
    ;

tileOpBuiltin
    : COPY | TMA_COPY | ASYNC_COPY | COPY_CLUSTER | GEMM | GEMM_BLOCKSCALED
    | CLEAR | FILL | REDUCE_SUM | REDUCE_MAX | REDUCE_MIN | REDUCE_ABSSUM
    | REDUCE_ABSMAX | ATOMIC_ADD | ATOMIC_ADDX2 | ATOMIC_ADDX4 | ATOMIC_LOAD | ATOMIC_STORE | THREAD_ALLREDUCE | CUMSUM | FINALIZE_REDUCER | IM2COL | DP4A
    | IMPORT_SOURCE | CALL_EXTERN | ACCESS_PTR | TCGEN05_CP_WARPX4 | TCGEN05_SF_WARP_TRANSPOSE
    ;

syncBuiltin
    : BARRIER_WAIT | BARRIER_ARRIVE | CLUSTER_SYNC | SET_MAX_NREG | DISABLE_WARP_GROUP_REG_ALLOC
    | PDL_TRIGGER | PDL_SYNC | USE_SWIZZLE | ANNOTATE_LAYOUT | CP_ASYNC_COMMIT | CP_ASYNC_WAIT | WAIT_WGMMA | TCGEN05_MMA_ARRIVE
    | FENCE_PROXY_ASYNC | SYNC_THREADS | BARRIER_ARRIVE_EXPECT_TX | CLC_TRY_CANCEL | CLC_TRY_CANCEL_MULTICAST | RNG_INIT
    ;

exprBuiltin
    : CAST | REINTERPRET | CEILDIV | FLOORDIV | FLOORMOD | MIN | MAX | CLAMP | ABS | EXP | EXP2 | LOG | LOG2 | SQRT
    | RSQRT | TANH | ERF | SIN | COS | FLOOR | CEIL | POW | SIGMOID | FAST_EXP | FAST_EXP2
    | BLOCK_RANK_IN_CLUSTER | NUM_SMS | SHFL_SYNC | SHFL_XOR | SHFL_DOWN | SHFL_UP
    | CLC_IS_CANCELED | CLC_GET_FIRST_CTAID_X | CLC_GET_FIRST_CTAID_Y | CLC_GET_FIRST_CTAID_Z | RNG_RAND | RNG_RAND_FLOAT
    ;

// ---------------------------------------------------------------- lexer

// structural keywords
IMPORT            : 'import';
TARGET            : 'target';
CONST             : 'const';
KERNEL            : 'kernel';
FN                : 'fn';
DYN               : 'dyn';
GRID              : 'grid';
THREADS           : 'threads';
CLUSTER           : 'cluster';
MIN_BLOCKS_PER_SM : 'min_blocks_per_sm';
AS                : 'as';
LET               : 'let';
VAR               : 'var';
FOR               : 'for';
IN                : 'in';
IF                : 'if';
WHILE             : 'while';
ELSE              : 'else';
WS                : 'ws';
BREAK             : 'break';
CONTINUE          : 'continue';
TRUE              : 'true';
FALSE             : 'false';
INF               : 'inf';

// loop kinds
SERIAL            : 'serial';
UNROLL            : 'unroll';
PARALLEL          : 'parallel';
PIPELINED         : 'pipelined';
VECTORIZED        : 'vectorized';
PERSISTENT        : 'persistent';

// dtypes
BOOL              : 'bool';
INT4              : 'int4';
INT8              : 'int8';
INT16             : 'int16';
INT32             : 'int32';
INT64             : 'int64';
UINT4             : 'uint4';
UINT8             : 'uint8';
UINT16            : 'uint16';
UINT32            : 'uint32';
UINT64            : 'uint64';
F16               : 'f16';
BF16              : 'bf16';
F32               : 'f32';
F64               : 'f64';
TF32              : 'tf32';
F8E4M3            : 'f8e4m3';
F8E5M2            : 'f8e5m2';
F6E2M3            : 'f6e2m3';
F6E3M2            : 'f6e3m2';
F4E2M1            : 'f4e2m1';
F4E2M1_UNPACKED   : 'f4e2m1_unpacked';
F6E2M3_UNPACKED   : 'f6e2m3_unpacked';
F6E3M2_UNPACKED   : 'f6e3m2_unpacked';
E8M0              : 'e8m0';

// allocations
ALLOC_SHARED      : 'alloc_shared';
ALLOC_FRAGMENT    : 'alloc_fragment';
ALLOC_LOCAL       : 'alloc_local';
ALLOC_TMEM        : 'alloc_tmem';
ALLOC_REDUCER     : 'alloc_reducer';
TENSOR            : 'Tensor';
RESHAPE           : 'reshape';
ALLOC_BARRIER     : 'alloc_barrier';
ALLOC_CLUSTER_BARRIER : 'alloc_cluster_barrier';

// tile operations
COPY              : 'copy';
TMA_COPY          : 'tma_copy';
ASYNC_COPY        : 'async_copy';
COPY_CLUSTER      : 'copy_cluster';
GEMM              : 'gemm';
GEMM_BLOCKSCALED  : 'gemm_blockscaled';
CLEAR             : 'clear';
FILL              : 'fill';
REDUCE_SUM        : 'reduce_sum';
REDUCE_MAX        : 'reduce_max';
REDUCE_MIN        : 'reduce_min';
REDUCE_ABSSUM     : 'reduce_abssum';
REDUCE_ABSMAX     : 'reduce_absmax';
CUMSUM            : 'cumsum';
FINALIZE_REDUCER  : 'finalize_reducer';
IM2COL            : 'im2col';
ATOMIC_ADD        : 'atomic_add';
ATOMIC_ADDX2      : 'atomic_addx2';
ATOMIC_ADDX4      : 'atomic_addx4';
ATOMIC_LOAD       : 'atomic_load';
ATOMIC_STORE      : 'atomic_store';
THREAD_ALLREDUCE  : 'thread_allreduce';
DP4A              : 'dp4a';
IMPORT_SOURCE     : 'import_source';
CALL_EXTERN       : 'call_extern';
ACCESS_PTR        : 'access_ptr';

// synchronisation
BARRIER_WAIT      : 'barrier_wait';
BARRIER_ARRIVE    : 'barrier_arrive';
CLUSTER_SYNC      : 'cluster_sync';
USE_SWIZZLE       : 'use_swizzle';
ANNOTATE_LAYOUT   : 'annotate_layout';
SET_MAX_NREG      : 'set_max_nreg';
DISABLE_WARP_GROUP_REG_ALLOC : 'disable_warp_group_reg_alloc';
PDL_TRIGGER       : 'pdl_trigger';
PDL_SYNC          : 'pdl_sync';
CP_ASYNC_COMMIT   : 'cp_async_commit';
WAIT_WGMMA        : 'wait_wgmma';
CP_ASYNC_WAIT     : 'cp_async_wait';
TCGEN05_MMA_ARRIVE : 'tcgen05_mma_arrive';
TCGEN05_CP_WARPX4 : 'tcgen05_cp_warpx4';
TCGEN05_SF_WARP_TRANSPOSE : 'tcgen05_sf_warp_transpose';
FENCE_PROXY_ASYNC : 'fence_proxy_async';
SYNC_THREADS : 'sync_threads';
BARRIER_ARRIVE_EXPECT_TX : 'barrier_arrive_expect_tx';
CLC_TRY_CANCEL    : 'clc_try_cancel';
CLC_TRY_CANCEL_MULTICAST : 'clc_try_cancel_multicast';
RNG_INIT          : 'rng_init';

// expression builtins
CAST              : 'cast';
REINTERPRET       : 'reinterpret';
CEILDIV           : 'ceildiv';
FLOORDIV          : 'floordiv';
FLOORMOD          : 'floormod';
MIN               : 'min';
MAX               : 'max';
CLAMP             : 'clamp';
ABS               : 'abs';
EXP               : 'exp';
EXP2              : 'exp2';
LOG               : 'log';
LOG2              : 'log2';
SQRT              : 'sqrt';
RSQRT             : 'rsqrt';
FAST_EXP          : '__exp';
FAST_EXP2         : '__exp2';
TANH              : 'tanh';
ERF               : 'erf';
SIN               : 'sin';
COS               : 'cos';
FLOOR             : 'floor';
CEIL              : 'ceil';
POW               : 'pow';
SIGMOID           : 'sigmoid';
BLOCK_RANK_IN_CLUSTER : 'block_rank_in_cluster';
NUM_SMS           : 'num_sms';
RNG_RAND          : 'rng_rand';
RNG_RAND_FLOAT    : 'rng_rand_float';
SHFL_SYNC         : 'shfl_sync';
SHFL_XOR          : 'shfl_xor';
SHFL_DOWN         : 'shfl_down';
SHFL_UP           : 'shfl_up';
CLC_IS_CANCELED   : 'clc_is_canceled';
CLC_GET_FIRST_CTAID_X : 'clc_get_first_ctaid_x';
CLC_GET_FIRST_CTAID_Y : 'clc_get_first_ctaid_y';
CLC_GET_FIRST_CTAID_Z : 'clc_get_first_ctaid_z';

// punctuation and operators
LPAREN       : '(';
RPAREN       : ')';
LBRACK       : '[';
RBRACK       : ']';
LBRACE       : '{';
RBRACE       : '}';
COMMA        : ',';
SEMI         : ';';
COLON        : ':';
QUESTION     : '?';
PLUS_ASSIGN  : '+=';
MINUS_ASSIGN : '-=';
STAR_ASSIGN  : '*=';
SLASH_ASSIGN : '/=';
EQ           : '==';
NE           : '!=';
LE           : '<=';
GE           : '>=';
SHL          : '<<';
SHR          : '>>';
AND          : '&&';
OR           : '||';
ASSIGN       : '=';
LT           : '<';
GT           : '>';
PLUS         : '+';
MINUS        : '-';
STARSTAR     : '**';
STAR         : '*';
SLASH        : '/';
PERCENT      : '%';
NOT          : '!';
TILDE        : '~';
AMP          : '&';
CARET        : '^';
PIPE         : '|';

// literals
FLOAT
    : DIGITS '.' DIGITS? EXPONENT?
    | '.' DIGITS EXPONENT?
    | DIGITS EXPONENT
    ;
INT
    : DIGITS
    | '0' [xX] [0-9a-fA-F] ('_'? [0-9a-fA-F])*
    | '0' [bB] [01] ('_'? [01])*
    ;
STRING       : '"' (~["\\\r\n] | '\\' ~[\r\n])* '"';
IDENT        : [a-zA-Z_] [a-zA-Z0-9_]*;

fragment DIGITS   : [0-9] ('_'? [0-9])*;
fragment EXPONENT : [eE] [+-]? [0-9]+;

// trivia
LINE_COMMENT  : '//' ~[\r\n]* -> skip;
BLOCK_COMMENT : '/*' .*? '*/' -> skip;
WHITESPACE    : [ \t\r\n\f]+ -> skip;

// Malformed input. These tokens are longer than nothing but shorter than the
// well-formed token whenever the well-formed one matches, so they only win
// when the input really is broken. The front end reports them by name and
// hides them from the parser so that it can go on looking for more errors.
UNTERMINATED_COMMENT : '/*' (~'*' | '*'+ ~[*/])* '*'* -> channel(HIDDEN);
UNTERMINATED_STRING  : '"' (~["\\\r\n] | '\\' ~[\r\n])* -> channel(HIDDEN);
INVALID_CHAR         : . -> channel(HIDDEN);

package dev.sapwood.spark;

/**
 * A statement that starts like one of ours and then goes wrong: the token
 * where it does, where that token is, and what was expected there. Plain Java
 * (the grammar knows no Spark); each Spark line's {@link SapwoodSqlParser}
 * turns it into that line's {@code ParseException} (PARSE_SYNTAX_ERROR).
 */
final class SyntaxError extends Exception {
    private static final long serialVersionUID = 1L;

    /** The token as Spark shows it: {@code 'extra'}, or {@code end of input}. */
    final String near;
    /** 1-based line of the token, and its 0-based position in that line (Spark's). */
    final int line;
    final int position;
    /** What was expected, as Spark's hint: {@code ": expected a reference name"}. */
    final String hint;

    SyntaxError(String near, int line, int position, String hint) {
        super("Syntax error at or near " + near + hint + " (line " + line + ", pos "
                + position + ")");
        this.near = near;
        this.line = line;
        this.position = position;
        this.hint = hint;
    }

    /** At {@code token} of {@code sql}: its line and position counted from the text. */
    static SyntaxError at(String sql, Lexer.Token token, String hint) {
        int line = 1;
        int lineStart = 0;
        for (int k = 0; k < token.start && k < sql.length(); k++) {
            if (sql.charAt(k) == '\n') {
                line++;
                lineStart = k + 1;
            }
        }
        return new SyntaxError(token.shown(), line, token.start - lineStart, hint);
    }
}

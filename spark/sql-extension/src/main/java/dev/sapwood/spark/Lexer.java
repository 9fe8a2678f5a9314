package dev.sapwood.spark;

import java.util.ArrayList;
import java.util.List;

/**
 * Tokens of a statement, read on demand: the parser looks at the first two or
 * three before it knows whether a statement is one of ours, so a statement it
 * hands on (every SELECT) is never read further than its first word.
 */
final class Lexer {
    enum Kind { WORD, QUOTED, STRING, DOT, COMMA, SEMI, OTHER, EOF }

    static final class Token {
        final Kind kind;
        final String text;
        final int start;
        final int end;

        Token(Kind kind, String text, int start, int end) {
            this.kind = kind;
            this.text = text;
            this.start = start;
            this.end = end;
        }

        boolean is(String keyword) {
            return kind == Kind.WORD && text.equalsIgnoreCase(keyword);
        }

        /** How a parse error shows it: Spark's own spelling. */
        String shown() {
            return kind == Kind.EOF ? "end of input" : "'" + text + "'";
        }
    }

    private final String sql;
    private final List<Token> tokens = new ArrayList<>();
    private int pos;

    Lexer(String sql) {
        this.sql = sql;
    }

    String sql() {
        return sql;
    }

    /** Token {@code i} (0-based), reading as far as needed; EOF past the end. */
    Token get(int i) {
        while (tokens.size() <= i) {
            Token t = read();
            tokens.add(t);
            if (t.kind == Kind.EOF) {
                while (tokens.size() <= i) {
                    tokens.add(t);
                }
            }
        }
        return tokens.get(i);
    }

    private Token read() {
        skipBlanks();
        int n = sql.length();
        if (pos >= n) {
            return new Token(Kind.EOF, "", n, n);
        }
        int start = pos;
        char c = sql.charAt(pos);
        if (c == '`') {
            return quoted(start, '`', Kind.QUOTED);
        }
        if (c == '\'' || c == '"') {
            return quoted(start, c, Kind.STRING);
        }
        if (isWordChar(c)) {
            while (pos < n && isWordChar(sql.charAt(pos))) {
                pos++;
            }
            return new Token(Kind.WORD, sql.substring(start, pos), start, pos);
        }
        pos++;
        Kind kind = c == '.' ? Kind.DOT : c == ',' ? Kind.COMMA : c == ';' ? Kind.SEMI : Kind.OTHER;
        return new Token(kind, String.valueOf(c), start, pos);
    }

    /** Whitespace, {@code -- line} and (nested) {@code /* block *}{@code /} comments. */
    private void skipBlanks() {
        int n = sql.length();
        while (pos < n) {
            char c = sql.charAt(pos);
            if (Character.isWhitespace(c)) {
                pos++;
            } else if (sql.startsWith("--", pos)) {
                int nl = sql.indexOf('\n', pos);
                pos = nl < 0 ? n : nl + 1;
            } else if (sql.startsWith("/*", pos)) {
                int depth = 0;
                while (pos < n) {
                    if (sql.startsWith("/*", pos)) {
                        depth++;
                        pos += 2;
                    } else if (sql.startsWith("*/", pos)) {
                        depth--;
                        pos += 2;
                        if (depth == 0) {
                            break;
                        }
                    } else {
                        pos++;
                    }
                }
            } else {
                return;
            }
        }
    }

    /** A backquoted name ({@code ``} for a backquote) or a string ('' or \ escapes). */
    private Token quoted(int start, char quote, Kind kind) {
        StringBuilder text = new StringBuilder();
        int n = sql.length();
        pos++;
        while (pos < n) {
            char c = sql.charAt(pos);
            if (c == quote) {
                if (pos + 1 < n && sql.charAt(pos + 1) == quote) {
                    text.append(quote);
                    pos += 2;
                    continue;
                }
                pos++;
                return new Token(kind, text.toString(), start, pos);
            }
            if (c == '\\' && kind == Kind.STRING && pos + 1 < n) {
                text.append(sql.charAt(pos + 1));
                pos += 2;
                continue;
            }
            text.append(c);
            pos++;
        }
        // Unterminated: one token the parser rejects where it stands.
        return new Token(Kind.OTHER, sql.substring(start), start, n);
    }

    /** Names, keywords, hashes, instants and ref specs ({@code main~1}, {@code etl@ab12},
     * {@code main*2026-11-22T09:00:00Z}); a dot is a token of its own. */
    static boolean isWordChar(char c) {
        return Character.isLetterOrDigit(c) || "_-/:+@~^*$".indexOf(c) >= 0;
    }
}

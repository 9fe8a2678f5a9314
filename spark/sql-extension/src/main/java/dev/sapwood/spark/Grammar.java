package dev.sapwood.spark;

import dev.sapwood.spark.Lexer.Kind;
import dev.sapwood.spark.Lexer.Token;
import dev.sapwood.spark.Statement.At;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The extension's statements, by recursive descent over {@link Lexer}'s tokens.
 * {@link #parse} answers null for a statement that is not one of ours, having
 * looked at its first words only; a statement that starts like ours and then
 * goes wrong is a {@link SyntaxError} pointing at the token (Spark's ParseException,
 * made by the line's {@link SapwoodSqlParser}). Plain Java: no Spark class.
 *
 * <pre>
 * CREATE (BRANCH|TAG) [IF NOT EXISTS] name [IN c] [FROM ref] [AT [TIMESTAMP|COMMIT] x]
 * DROP (BRANCH|TAG) [IF EXISTS] name [IN c]
 * USE REFERENCE name [AT [TIMESTAMP|COMMIT] x] [IN c]
 * LIST REFERENCES [IN c]
 * SHOW REFERENCE [IN c]
 * ASSIGN (BRANCH|TAG) name [TO ref] [AT [TIMESTAMP|COMMIT] x] [IN c]
 * MERGE BRANCH [name] [AT [TIMESTAMP|COMMIT] x] [INTO ref] [IN c] [DRY RUN]
 *              [FORCE (ns.k [, ...])] [DROP (ns.k [, ...])]
 * SHOW LOG [ref] [AT [TIMESTAMP|COMMIT] x] [IN c]
 * SHOW DIFF ref ref [IN c]
 * SHOW VIEW (HISTORY|LINEAGE|DEPENDENTS) ns.name [IN c]
 * RESTORE ns.v [, ns.w ...] FROM (ref | TIMESTAMP t) [IN c]
 * </pre>
 * The optional clauses after a name may come in any order, each once.
 */
final class Grammar {
    /** Words that open a clause: bare, they are never taken for a name. */
    private static final Set<String> CLAUSES = new HashSet<>(
            Arrays.asList("IN", "FROM", "AT", "TO", "INTO", "DRY"));

    private final Lexer lexer;
    private int i;

    private Grammar(Lexer lexer) {
        this.lexer = lexer;
    }

    /** The statement, or null when {@code sql} is not one of ours (the next parser's). */
    static Statement parse(String sql) throws SyntaxError {
        Lexer lexer = new Lexer(sql);
        if (!claims(lexer)) {
            return null;
        }
        return new Grammar(lexer).statement();
    }

    private static boolean claims(Lexer lexer) {
        Token first = lexer.get(0);
        if (first.kind != Kind.WORD) {
            return false;
        }
        Token second = lexer.get(1);
        switch (first.text.toUpperCase(Locale.ROOT)) {
            case "CREATE":
            case "DROP":
            case "ASSIGN":
                return second.is("BRANCH") || second.is("TAG");
            case "USE": {
                // USE REFERENCE alone (or USE reference.x) is Spark's USE of a namespace.
                Kind third = lexer.get(2).kind;
                return second.is("REFERENCE") && (third == Kind.WORD || third == Kind.QUOTED);
            }
            case "LIST":
                return second.is("REFERENCES");
            case "SHOW":
                return second.is("REFERENCE") || second.is("LOG") || second.is("DIFF")
                        || second.is("VIEW");
            case "MERGE":
                return second.is("BRANCH");
            case "RESTORE":
                return !second.is("TABLE");
            default:
                return false;
        }
    }

    private Statement statement() throws SyntaxError {
        Token first = next();
        Statement s;
        switch (first.text.toUpperCase(Locale.ROOT)) {
            case "CREATE":
                s = new Statement(Statement.Kind.CREATE_REFERENCE, lexer.sql());
                s.refType = refType();
                if (accept("IF")) {
                    expect("NOT");
                    expect("EXISTS");
                    s.ifFlag = true;
                }
                s.name = ref("a reference name");
                clauses(s, "IN", "FROM", "AT");
                break;
            case "DROP":
                s = new Statement(Statement.Kind.DROP_REFERENCE, lexer.sql());
                s.refType = refType();
                if (accept("IF")) {
                    expect("EXISTS");
                    s.ifFlag = true;
                }
                s.name = ref("a reference name");
                clauses(s, "IN");
                break;
            case "USE":
                s = new Statement(Statement.Kind.USE_REFERENCE, lexer.sql());
                expect("REFERENCE");
                s.name = ref("a reference name");
                clauses(s, "AT", "IN");
                break;
            case "LIST":
                s = new Statement(Statement.Kind.LIST_REFERENCES, lexer.sql());
                expect("REFERENCES");
                clauses(s, "IN");
                break;
            case "ASSIGN":
                s = new Statement(Statement.Kind.ASSIGN_REFERENCE, lexer.sql());
                s.refType = refType();
                s.name = ref("a reference name");
                clauses(s, "TO", "AT", "IN");
                break;
            case "MERGE":
                s = new Statement(Statement.Kind.MERGE_BRANCH, lexer.sql());
                expect("BRANCH");
                s.name = mergeSource();
                clauses(s, "AT", "INTO", "IN", "DRY", "FORCE", "DROP");
                break;
            case "RESTORE":
                s = new Statement(Statement.Kind.RESTORE, lexer.sql());
                s.keys.add(key());
                while (peek().kind == Kind.COMMA) {
                    next();
                    s.keys.add(key());
                }
                expect("FROM");
                if (peek().is("TIMESTAMP") && isValue(lexer.get(i + 1))) {
                    next();
                    s.fromInstant = true;
                    s.from = value("an instant");
                } else {
                    s.from = ref("a reference (or TIMESTAMP and an instant)");
                }
                clauses(s, "IN");
                break;
            default: // SHOW, as claimed
                s = show();
        }
        end();
        return s;
    }

    private Statement show() throws SyntaxError {
        Token what = next();
        Statement s;
        if (what.is("REFERENCE")) {
            s = new Statement(Statement.Kind.SHOW_REFERENCE, lexer.sql());
            clauses(s, "IN");
        } else if (what.is("LOG")) {
            s = new Statement(Statement.Kind.SHOW_LOG, lexer.sql());
            s.name = optionalRef();
            clauses(s, "AT", "IN");
        } else if (what.is("DIFF")) {
            s = new Statement(Statement.Kind.SHOW_DIFF, lexer.sql());
            s.from = ref("the reference to diff from");
            s.to = ref("the reference to diff to");
            clauses(s, "IN");
        } else {
            Token sub = next();
            Statement.Kind kind = sub.is("HISTORY") ? Statement.Kind.VIEW_HISTORY
                    : sub.is("LINEAGE") ? Statement.Kind.VIEW_LINEAGE
                    : sub.is("DEPENDENTS") ? Statement.Kind.VIEW_DEPENDENTS : null;
            if (kind == null) {
                throw error(sub, ": expected HISTORY, LINEAGE or DEPENDENTS");
            }
            s = new Statement(kind, lexer.sql());
            s.keys.add(key());
            clauses(s, "IN");
        }
        return s;
    }

    /** Optional clauses, any order, each at most once. */
    private void clauses(Statement s, String... allowed) throws SyntaxError {
        Set<String> open = new HashSet<>(Arrays.asList(allowed));
        Set<String> seen = new HashSet<>();
        while (peek().kind == Kind.WORD) {
            Token t = peek();
            String word = t.text.toUpperCase(Locale.ROOT);
            if (!open.contains(word)) {
                break;
            }
            if (!seen.add(word)) {
                throw error(t, ": " + word + " is given twice");
            }
            next();
            switch (word) {
                case "IN":
                    s.catalog = identifier("a catalog name");
                    break;
                case "FROM":
                    s.from = ref("a reference");
                    break;
                case "TO":
                    s.to = ref("a reference");
                    break;
                case "INTO":
                    s.into = ref("a branch");
                    break;
                case "DRY":
                    expect("RUN");
                    s.dryRun = true;
                    break;
                case "FORCE":
                    keyList(s, s.force, t);
                    break;
                case "DROP":
                    keyList(s, s.drop, t);
                    break;
                default: // AT
                    s.at = at();
            }
        }
    }

    private At at() throws SyntaxError {
        // TIMESTAMP or COMMIT after AT is the keyword, never the value: a hash or an
        // instant is neither word, so AT COMMIT alone is an error at its end.
        String kind = null;
        if (peek().is("TIMESTAMP") || peek().is("COMMIT")) {
            kind = next().text.toUpperCase(Locale.ROOT);
        }
        return new At(kind, value(kind == null ? "a commit hash or an instant"
                : kind.equals("COMMIT") ? "a commit hash" : "an instant"));
    }

    private String refType() throws SyntaxError {
        Token t = next();
        if (t.is("BRANCH") || t.is("TAG")) {
            return t.text.toUpperCase(Locale.ROOT);
        }
        throw error(t, ": expected BRANCH or TAG");
    }

    /** A reference name or spec; a bare clause word is not one (backquote it). */
    private String ref(String what) throws SyntaxError {
        Token t = peek();
        if (t.kind == Kind.WORD && CLAUSES.contains(t.text.toUpperCase(Locale.ROOT))) {
            throw error(t, ": expected " + what);
        }
        return value(what);
    }

    private String optionalRef() throws SyntaxError {
        Token t = peek();
        if (t.kind == Kind.EOF || t.kind == Kind.SEMI
                || (t.kind == Kind.WORD && CLAUSES.contains(t.text.toUpperCase(Locale.ROOT)))) {
            return null;
        }
        return ref("a reference name");
    }

    /** MERGE's source: a name, or none when a clause follows (FORCE or DROP and a
     * parenthesis open one there; else they name a branch). */
    private String mergeSource() throws SyntaxError {
        Token t = peek();
        if ((t.is("FORCE") || t.is("DROP")) && lexer.get(i + 1).text.equals("(")
                && lexer.get(i + 1).kind == Kind.OTHER) {
            return null;
        }
        return optionalRef();
    }

    /** {@code (ns.k [, ns.k ...])} after FORCE or DROP: keys, each once in the statement. */
    private void keyList(Statement s, List<List<String>> into, Token clause)
            throws SyntaxError {
        Token open = next();
        if (open.kind != Kind.OTHER || !open.text.equals("(")) {
            throw error(open, ": expected ( and the keys "
                    + clause.text.toUpperCase(Locale.ROOT) + " applies to");
        }
        while (true) {
            Token at = peek();
            List<String> key = key();
            if (s.force.contains(key) || s.drop.contains(key)) {
                throw error(at, ": " + String.join(".", key) + " is given twice (each key "
                        + "takes FORCE or DROP once)");
            }
            into.add(key);
            if (peek().kind != Kind.COMMA) {
                break;
            }
            next();
        }
        Token close = next();
        if (close.kind != Kind.OTHER || !close.text.equals(")")) {
            throw error(close, ": expected , or )");
        }
    }

    private static boolean isValue(Token t) {
        return t.kind == Kind.WORD || t.kind == Kind.QUOTED || t.kind == Kind.STRING
                || t.kind == Kind.DOT;
    }

    /** A quoted name, a string, or words and dots written without a space between them. */
    private String value(String what) throws SyntaxError {
        Token t = peek();
        if (t.kind == Kind.QUOTED || t.kind == Kind.STRING) {
            next();
            return t.text;
        }
        if (t.kind != Kind.WORD && t.kind != Kind.DOT) {
            throw error(t, ": expected " + what);
        }
        StringBuilder out = new StringBuilder(next().text);
        int end = t.end;
        while ((peek().kind == Kind.WORD || peek().kind == Kind.DOT) && peek().start == end) {
            Token more = next();
            out.append(more.text);
            end = more.end;
        }
        return out.toString();
    }

    private String identifier(String what) throws SyntaxError {
        Token t = next();
        if (t.kind == Kind.QUOTED || (t.kind == Kind.WORD && !CLAUSES.contains(
                t.text.toUpperCase(Locale.ROOT)))) {
            return t.text;
        }
        throw error(t, ": expected " + what);
    }

    /** {@code ns.name}: parts bare or backquoted, joined by dots. */
    private List<String> key() throws SyntaxError {
        List<String> parts = new ArrayList<>();
        parts.add(identifier("a name (ns.name)"));
        while (peek().kind == Kind.DOT) {
            next();
            parts.add(identifier("a name after the dot"));
        }
        return parts;
    }

    private void end() throws SyntaxError {
        while (peek().kind == Kind.SEMI) {
            next();
        }
        Token t = peek();
        if (t.kind != Kind.EOF) {
            throw error(t, ": extraneous input");
        }
    }

    private Token peek() {
        return lexer.get(i);
    }

    private Token next() {
        return lexer.get(i++);
    }

    private boolean accept(String keyword) {
        if (peek().is(keyword)) {
            i++;
            return true;
        }
        return false;
    }

    private void expect(String keyword) throws SyntaxError {
        Token t = next();
        if (!t.is(keyword)) {
            throw error(t, ": expected " + keyword);
        }
    }

    /** The error at {@code t}: "Syntax error at or near 'x': hint", where it is. */
    private SyntaxError error(Token t, String hint) {
        return SyntaxError.at(lexer.sql(), t, hint);
    }
}

/*
 * embedding lookup: rows of a table gathered by token, out[i][p] = table[tok[i]][p] (double).
 */
void embedding_lookup_f64(int n, int v, int d, int tok[n], double table[v][d], double out[n][d])
{
    for (int i = 0; i < n; i++)
        for (int p = 0; p < d; p++)
            out[i][p] = table[tok[i]][p];
}

/*
 * embedding gradient: rows scattered by token, grad[tok[i]][p] += g[i][p] (float).
 */
void embedding_backward_f32(int n, int v, int d, int tok[n], float g[n][d], float grad[v][d])
{
    int i, p;

    for (i = 0; i < n; i++)
        for (p = 0; p < d; p++)
            grad[tok[i]][p] += g[i][p];
}

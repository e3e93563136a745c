/*
 * COO sparse matrix-vector product y[row[e]] += val[e] * x[col[e]] (float).
 */
void spmv_coo_f32(int n, int m, int nnz, int row[nnz], int col[nnz], float val[nnz], float x[m],
                  float y[n])
{
    for (int e = 0; e < nnz; e++)
        y[row[e]] += val[e] * x[col[e]];
}

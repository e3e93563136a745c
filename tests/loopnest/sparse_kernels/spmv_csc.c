/* y = A x, A in CSC (colptr, row, val): the update scatters into y through row. */
void spmv_csc(int n, int m, int nnz, const int colptr[m + 1], const int row[nnz], const double val[nnz],
              const double x[m], double y[n])
{
#pragma scop
    for (int i = 0; i < n; i++)
        y[i] = 0.0;
    for (int j = 0; j < m; j++)
        for (int p = colptr[j]; p < colptr[j + 1]; p++)
            y[row[p]] += val[p] * x[j];
#pragma endscop
}

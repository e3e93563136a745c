/* Rejected (unknown function call): foo is defined in another file, and is not a known math function
   (a function defined in this file, with a body of one return, would be inlined). */
double foo(int i);



void weigh(int n, double x[n])
{
    for (int i = 0; i < n; i++)
        x[i] *= foo(i);
}
